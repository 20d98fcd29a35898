/**
 * What every command shares: reporters, signals, error → exit code mapping (loading a run's
 * inputs is src/run/inputs.ts).
 */
import { setting } from '../core/settings.js';
import { SettingError } from '../core/setting-spec.js';
import { setMaxListeners } from 'node:events';
import { boardReporter } from '../report/board.js';
import { InputError, errorMessage } from '../load/errors.js';
import type { Masker } from '../core/mask.js';
import { REPORTERS, isOutputFormat, type Reporter } from '../report/index.js';
import { EXIT, type ExitCode } from '../core/exit.js';
import { ansibleCfg } from '../core/ansible-config.js';

/** The ansible.cfg in use (ansible-core's `Using FILE as config file`). */
function configFile(): { configFile?: string } {
  const file = ansibleCfg().file;
  return file ? { configFile: file } : {};
}

/**
 * The output format when `-o` is not given: ansible-core's (`ansible`) when the Ansible
 * configuration asks for its default stdout callback (`ANSIBLE_STDOUT_CALLBACK=default`,
 * `stdout_callback = default` in ansible.cfg), else `text`.
 */
export function defaultOutput(): string {
  const cb = setting('stdoutCallback');
  return cb === 'default' || cb === 'ansible.builtin.default' ? 'ansible' : 'text';
}

/** Colours of `-o ansible`, as ansible-core decides them: ANSIBLE_FORCE_COLOR, else not with ANSIBLE_NOCOLOR / NO_COLOR, else a terminal. */
function ansibleColor(flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (setting('forceColor')) return true;
  return process.stdout.isTTY === true && !setting('ansibleNoColor') && !setting('noColor');
}

/** Build the reporter for `--output`. */
export function makeReporter(output: string, opts: { verbosity: number; diff: boolean; color?: boolean; progress?: string; mask?: (s: string) => string }): Reporter {
  if (opts.progress !== undefined && opts.progress !== 'plain' && opts.progress !== 'board') throw new InputError(`unknown --progress '${opts.progress}'`, undefined, 'use one of: plain, board');
  if (!isOutputFormat(output)) throw new InputError(`unknown --output '${output}'`, undefined, `use one of: ${Object.keys(REPORTERS).join(', ')}`);
  const color = opts.color ?? (process.stdout.isTTY === true && !setting('noColor') && setting('term') !== 'dumb');
  // the live board: asked for, or by default on a terminal with text output (CI, pipes and json get the plain log)
  const board = output === 'text' && (opts.progress === 'board' || (opts.progress === undefined && process.stdout.isTTY === true && setting('term') !== 'dumb'));
  const factory = board ? boardReporter : REPORTERS[output];
  return factory({
    write: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
    color: output === 'ansible' ? ansibleColor(opts.color) : output === 'text' && color,
    verbosity: opts.verbosity,
    diff: opts.diff,
    tty: process.stdout.isTTY === true,
    ...(opts.mask ? { mask: opts.mask } : {}),
    ...(output === 'ansible' ? { ansible: { displaySkippedHosts: setting('displaySkippedHosts'), displayOkHosts: setting('displayOkHosts'), ...configFile() } } : {}),
  });
}

/**
 * Ctrl-C / SIGTERM / SIGHUP (the terminal went away): the first signal aborts (running steps get
 * the AbortSignal, nothing new starts, locks are released, the run record is written, the recap
 * prints — to nobody, after a hangup — exit 130); a second one exits at once.
 */
export function interruptController(onFirst: () => void): { signal: AbortSignal; dispose: () => void } {
  const ac = new AbortController();
  setMaxListeners(0, ac.signal); // every running step and request listens on the run's signal
  let count = 0;
  const handler = (sig: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      process.stderr.write(`\n${sig} received: stopping — running steps are being cancelled, nothing new starts (press Ctrl-C again to exit at once)\n`);
      ac.abort(new Error(`interrupted by ${sig}`));
      onFirst();
    } else {
      process.exit(EXIT.interrupted);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  process.on('SIGHUP', handler);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      process.off('SIGHUP', handler);
    },
  };
}

/** A run (not in check mode) failed unexpectedly after at least one task had run. */
export class RunCrashedError extends Error {
  constructor(readonly original: unknown) {
    super(errorMessage(original));
    this.name = 'RunCrashedError';
  }
}

/** `KPLAY_DEBUG`; a value that is not a boolean is taken as asking for the stack (this runs while an error is reported). */
function debugSetting(): boolean {
  try {
    return setting('debug');
  } catch {
    return true;
  }
}

/** Print an error the way every command does, masked, and return the exit code for it. */
export function reportError(err: unknown, masker?: Masker): ExitCode {
  if (err instanceof RunCrashedError) {
    const text = `the run stopped on an unexpected error after tasks had run, so clusters may have been changed: ${err.message}`;
    process.stderr.write(`ERROR: ${masker ? masker.mask(text) : text}\n  hint: the run record (kplay history) shows what ran; kplay run --resume last carries the run on\n`);
    const stack = err.original instanceof Error ? err.original.stack : undefined;
    if (stack) process.stderr.write(`${masker ? masker.mask(stack) : stack}\n`);
    return EXIT.crashed;
  }
  const text = errorMessage(err);
  process.stderr.write(`ERROR: ${masker ? masker.mask(text) : text}\n`);
  if (err instanceof InputError || err instanceof SettingError) return EXIT.usage;
  if (!(err instanceof Error) || debugSetting()) {
    if (err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  }
  return EXIT.usage;
}

/** Parse a comma-separated list option, possibly repeated. */
export function listOption(values: string[] | string | undefined): string[] {
  const arr = Array.isArray(values) ? values : values ? [values] : [];
  return arr.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
}
