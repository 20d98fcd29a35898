/**
 * `kplay run --progress board`: the live board on a terminal. Folds the run's events (masked by
 * the run's Masker before any reporter sees them) into a {@link BoardState} and redraws it in
 * place with ANSI escapes (cursor up, clear to end of screen), at most 10 times a second. The
 * recap is printed by the text reporter, exactly as `--progress plain` prints it.
 */
import { applyEvent, newBoard } from './board-state.js';
import { layoutBoard } from './board-layout.js';
import type { RunEvent } from './events.js';
import { textReporter, type Reporter, type ReporterOptions } from './text.js';

/** Terminal hooks of the board (the defaults use process.stdout). */
export interface BoardOptions extends ReporterOptions {
  /** Current terminal size. */
  size?: () => { columns: number; rows: number };
  /** Register a resize listener; returns its remover. */
  onResize?: (f: () => void) => () => void;
  /** Minimum ms between redraws. */
  throttleMs?: number;
  now?: () => number;
}

const HIDE = '\x1b[?25l';
const SHOW = '\x1b[?25h';

/** The board reporter factory. */
export function boardReporter(o: BoardOptions): Reporter {
  const now = o.now ?? ((): number => Date.now());
  const size = o.size ?? ((): { columns: number; rows: number } => ({ columns: process.stdout.columns || 80, rows: process.stdout.rows || 24 }));
  const throttle = o.throttleMs ?? 100;
  const board = newBoard(now());
  const recapPrinter = textReporter({ ...o, tty: false });
  let drawn = 0;
  let lastDraw = 0;
  let timer: NodeJS.Timeout | undefined;
  let cursorHidden = false;
  let closed = false;

  const erase = (): string => (drawn > 0 ? `\r\x1b[${drawn}A\x1b[J` : '\r\x1b[J');
  const draw = (): void => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (closed) return;
    lastDraw = now();
    const { columns, rows } = size();
    // one column less than the terminal: a full-width line would wrap on some terminals
    const lines = layoutBoard(board, { width: Math.max(20, columns - 1), height: Math.max(6, rows - 1), color: o.color, now: lastDraw });
    let out = erase();
    if (!cursorHidden) {
      out = HIDE + out;
      cursorHidden = true;
    }
    out += lines.map((l) => `${l}\n`).join('');
    drawn = lines.length;
    o.write(out);
  };
  const schedule = (): void => {
    if (timer || closed) return;
    const wait = Math.max(0, throttle - (now() - lastDraw));
    timer = setTimeout(draw, wait);
    timer.unref();
  };
  // elapsed times move even when nothing happens
  const tick = setInterval(schedule, 1000);
  tick.unref();
  const resize = (): void => {
    // the old board may have wrapped at the new width: clear the whole screen below the cursor's row
    o.write(`\r\x1b[J`);
    drawn = 0;
    draw();
  };
  const offResize = (o.onResize ?? ((f: () => void): (() => void) => {
    process.stdout.on('resize', f);
    return (): void => void process.stdout.off('resize', f);
  }))(resize);
  const restore = (): void => {
    if (cursorHidden) process.stdout.write(SHOW);
  };
  // Ctrl-C: the interrupt handler (src/cli/common.ts, registered after this one) prints a line on
  // stderr; take the board off first so that line stays readable and the board redraws below it
  const onSignal = (): void => {
    if (closed) return;
    o.write(erase());
    drawn = 0;
    schedule();
  };
  if (!o.onResize) {
    process.once('exit', restore);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onSignal);
  }

  const finish = (): void => {
    if (closed) return;
    draw(); // the final state stays on screen
    closed = true;
    clearInterval(tick);
    offResize();
    if (cursorHidden) o.write(SHOW);
    cursorHidden = false;
    if (!o.onResize) {
      process.off('exit', restore);
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, onSignal);
    }
  };

  return {
    handle(e: RunEvent): void {
      applyEvent(board, e, now());
      if (e.type === 'recap') {
        finish();
        recapPrinter.handle(e);
        return;
      }
      if (e.type === 'run_start' && e.check) {
        recapPrinter.handle(e);
        return;
      }
      schedule();
    },
    close(): void {
      finish();
      recapPrinter.close();
    },
  };
}
