/**
 * The live board's layout: a {@link BoardState} → the lines on screen. Pure (no terminal, no
 * clock): width/height and time come in, every line is cut to the width, many clusters collapse
 * into one summary line per finished/pending state, and the rows are capped to the height.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { CLUSTER_STATES, countStates, estimateMs, type BoardState, type ClusterRow, type ClusterState } from './board-state.js';

/** Screen size and colour. */
export interface LayoutOptions {
  width: number;
  height: number;
  color: boolean;
  now: number;
}

/** `1m05s` / `12.3s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const rs = String(Math.floor(s % 60)).padStart(2, '0');
  return h ? `${h}h${String(m % 60).padStart(2, '0')}m${rs}s` : `${m}m${rs}s`;
}

/** Cut a plain string to `width` characters (… marks the cut). */
export function truncate(s: string, width: number): string {
  const flat = s.replace(/[\r\n\t]+/g, ' ');
  if (width <= 0) return '';
  return flat.length <= width ? flat : `${flat.slice(0, Math.max(0, width - 1))}…`;
}

function stateColor(c: ChalkInstance, s: ClusterState): ChalkInstance {
  switch (s) {
    case 'done':
      return c.green;
    case 'rescued':
      return c.yellow;
    case 'failed':
      return c.red;
    case 'waiting':
    case 'draining':
      return c.magenta;
    case 'running':
      return c.cyan;
    case 'pending':
    case 'skipped':
      return c.gray;
  }
}

const COLLAPSIBLE: ReadonlySet<ClusterState> = new Set(['done', 'pending', 'skipped']);

function rowLine(r: ClusterRow, nameW: number, width: number, now: number, c: ChalkInstance): string {
  const el = r.state === 'pending' ? '-' : formatDuration((r.endedAt ?? now) - r.startedAt);
  const head = `${truncate(r.name, nameW).padEnd(nameW)} ${r.state.padEnd(8)} ${r.batch ? `b${String(r.batch).padEnd(3)}` : 'b-  '} ${el.padStart(7)} `;
  // what it waits on matters more than the task's name: the task goes when both do not fit
  const full = r.waiting && r.task ? `${r.task} › ${r.waiting}` : r.waiting || r.task;
  const what = head.length + full.length <= width ? full : r.waiting || r.task;
  const plain = truncate(head + what, width).trimEnd();
  // colour only the state word, on the already-cut plain text
  const at = nameW + 1;
  return plain.length >= at + 8 ? plain.slice(0, at) + stateColor(c, r.state)(plain.slice(at, at + 8)) + plain.slice(at + 8) : plain;
}

/**
 * Lay the board out. Returns the lines (no trailing newlines), at most `height` of them, each at
 * most `width` characters visible.
 */
export function layoutBoard(b: BoardState, o: LayoutOptions): string[] {
  const c = new Chalk({ level: o.color ? 1 : 0 });
  const width = Math.max(20, o.width);
  const height = Math.max(6, o.height);
  const counts = countStates(b);
  const eta = estimateMs(b, o.now);
  const countText = CLUSTER_STATES.filter((s) => counts[s] > 0).map((s) => `${s} ${counts[s]}`).join(' · ');
  const header = `${b.batches ? `batch ${b.batch}/${b.batches}` : 'starting'} · ${countText || 'no clusters yet'} · ${formatDuration(o.now - b.startedAt)}${eta !== undefined && !b.recap ? ` · ETA ${formatDuration(eta)}` : ''}`;
  const lines: string[] = [c.bold(truncate(header, width))];
  const play = b.play ? truncate(`PLAY [${b.play}]`, width) : '';
  if (play) lines.push(c.gray(play));

  const rows = [...b.rows.values()];
  const nameW = Math.min(24, Math.max(7, ...rows.map((r) => r.name.length)));
  // rows budget: leave room for at least 3 log lines and the separator
  const logMin = Math.min(3, b.log.length);
  const budget = Math.max(1, height - lines.length - (logMin ? logMin + 1 : 0));
  const all = rows.map((r) => rowLine(r, nameW, width, o.now, c));
  let body: string[];
  if (all.length <= budget) {
    body = all;
  } else {
    const active = rows.filter((r) => !COLLAPSIBLE.has(r.state));
    const groups = CLUSTER_STATES.filter((s) => COLLAPSIBLE.has(s) && counts[s] > 0).map((s) => {
      const names = rows.filter((r) => r.state === s).map((r) => r.name);
      return stateColor(c, s)(truncate(`${s} ${names.length}: ${names.join(', ')}`, width));
    });
    const room = Math.max(0, budget - groups.length);
    body = active.slice(0, room).map((r) => rowLine(r, nameW, width, o.now, c));
    if (active.length > room) {
      body = body.slice(0, Math.max(0, room - 1));
      body.push(c.gray(truncate(`… and ${active.length - body.length} more active`, width)));
    }
    body.push(...groups.slice(0, Math.max(0, budget - body.length)));
  }
  lines.push(...body);
  const logRoom = height - lines.length - 1;
  if (b.log.length && logRoom > 0) {
    lines.push(c.gray('─'.repeat(Math.min(width, 40))));
    for (const l of b.log.slice(-logRoom)) {
      const t = truncate(l, width);
      lines.push(t.startsWith('FAILED') || t.startsWith('UNREACHABLE') || t.startsWith('PLAY ABORTED') ? c.red(t) : t.startsWith('WARNING') ? c.magenta(t) : t);
    }
  }
  return lines.slice(0, height);
}
