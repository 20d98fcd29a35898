/**
 * What every command shares: loading the registry, playbook and inventory; extra vars;
 * masking; reporters; signals; error → exit code mapping.
 */
import { setting, SettingError } from '../core/settings.js';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import { boardReporter } from '../report/board.js';
import { InputError, errorMessage } from '../load/errors.js';
import { loadYamlDoc, parseYaml } from '../load/yaml.js';
import { loadInventory, loadNoInventory } from '../inventory/resolve.js';
import { withImplicitLocalhost } from '../inventory/localhost.js';
import type { Inventory } from '../inventory/types.js';
import { loadPlaybook } from '../playbook/parse.js';
import type { Playbook } from '../playbook/types.js';
import { Masker } from '../core/mask.js';
import { REPORTERS, isOutputFormat, type Reporter } from '../report/index.js';
import { loadRegistry, type ModuleRegistry } from '../plugins/registry.js';
import { EXIT, type ExitCode } from '../core/exit.js';

/** Flags shared by commands that load a playbook. */
export interface LoadFlags {
  inventory?: string;
  extraVars?: string[];
  modulePath?: string[];
}

/** Everything a run needs, loaded and checked. */
export interface Loaded {
  registry: ModuleRegistry;
  playbook: Playbook;
  inventory?: Inventory;
  extraVars: Record<string, unknown>;
  masker: Masker;
}

/** Parse `-e` values: `k=v k2=v2`, `@file.yml`, or an inline YAML/JSON map. Later values win. */
export async function parseExtraVars(values: string[] | undefined, cwd: string, masker: Masker): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const raw of values ?? []) {
    const v = raw.trim();
    if (v.startsWith('@')) {
      const file = path.resolve(cwd, v.slice(1));
      const { value, secrets } = await loadYamlDoc(file);
      secrets.forEach((s) => masker.addDeclared(s));
      if (value === null) continue;
      if (typeof value !== 'object' || Array.isArray(value)) throw new InputError(`-e ${v}: the file must hold a map of variables`, { file, line: 1, col: 1 });
      Object.assign(out, value);
    } else if (v.startsWith('{')) {
      const { docs } = parseYaml(v, '-e');
      const value = docs[0];
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`-e: expected a map, got ${v}`);
      Object.assign(out, value);
    } else {
      for (const pair of splitPairs(v)) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new InputError(`-e '${pair}': expected key=value, @file.yml or a {map}`);
        const key = pair.slice(0, eq);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new InputError(`-e: invalid variable name '${key}'`);
        out[key] = pair.slice(eq + 1);
      }
    }
  }
  masker.addByName(out);
  return out;
}

/** Split `a=1 b="x y"` on spaces outside quotes (quotes removed). */
function splitPairs(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let q: string | undefined;
  for (const ch of s) {
    if (q) {
      if (ch === q) q = undefined;
      else cur += ch;
    } else if (ch === '"' || ch === "'") q = ch;
    else if (/\s/.test(ch)) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

/** What kplay says when no inventory is given, as ansible-playbook does. */
export const NO_INVENTORY_WARNING = 'No inventory was parsed, only implicit localhost is available';

/**
 * The inventory of `-i REF`, or with no `-i` (when `orEmpty`) an empty one after saying so once on
 * stderr (Ansible's warning). A play naming `localhost` gets Ansible's implicit localhost.
 */
export async function loadInventoryFlag(
  ref: string | undefined,
  opts: { cwd: string; playbookDir?: string; patterns: readonly (string | readonly string[] | undefined)[] },
): Promise<Inventory> {
  let inv: Inventory;
  if (ref) inv = await loadInventory(ref, { cwd: opts.cwd, playbookDir: opts.playbookDir });
  else {
    process.stderr.write(`WARNING: ${NO_INVENTORY_WARNING}\n`);
    inv = await loadNoInventory({ cwd: opts.cwd, playbookDir: opts.playbookDir });
  }
  return withImplicitLocalhost(inv, opts.patterns, { cwd: opts.cwd });
}

/**
 * Load registry, playbook (all static checks), inventory and extra vars. Throws InputError.
 * Without `-i`: `requireInventory` (run, plan, drift) runs on Ansible's implicit localhost only
 * (with Ansible's warning); otherwise (validate) there is no inventory to check patterns against.
 */
export async function loadAll(playbookFile: string, flags: LoadFlags, requireInventory: boolean): Promise<Loaded> {
  const cwd = process.cwd();
  const masker = new Masker();
  const pbDir = path.dirname(path.resolve(playbookFile));
  const registry = await loadRegistry({ modulePaths: flags.modulePath, searchDirs: [pbDir, cwd] });
  const playbook = await loadPlaybook(playbookFile, { registry });
  playbook.secrets.forEach((s) => masker.addDeclared(s));
  for (const p of playbook.plays) masker.addByName(p.vars);
  const extraVars = await parseExtraVars(flags.extraVars, cwd, masker);
  let inventory: Inventory | undefined;
  if (flags.inventory || requireInventory) {
    inventory = await loadInventoryFlag(flags.inventory, { cwd, playbookDir: pbDir, patterns: playbook.plays.map((p) => p.hosts) });
    inventory.secrets.forEach((s) => masker.add(s));
    inventory.declaredSecrets?.forEach((s) => masker.addDeclared(s));
  }
  return { registry, playbook, inventory, extraVars, masker };
}

/** Build the reporter for `--output`. */
export function makeReporter(output: string, opts: { verbosity: number; diff: boolean; color?: boolean; progress?: string }): Reporter {
  if (opts.progress !== undefined && opts.progress !== 'plain' && opts.progress !== 'board') throw new InputError(`unknown --progress '${opts.progress}'`, undefined, 'use one of: plain, board');
  if (!isOutputFormat(output)) throw new InputError(`unknown --output '${output}'`, undefined, `use one of: ${Object.keys(REPORTERS).join(', ')}`);
  const color = opts.color ?? (process.stdout.isTTY === true && !setting('noColor') && setting('term') !== 'dumb');
  // the live board: asked for, or by default on a terminal with text output (CI, pipes and json get the plain log)
  const board = output === 'text' && (opts.progress === 'board' || (opts.progress === undefined && process.stdout.isTTY === true && setting('term') !== 'dumb'));
  const factory = board ? boardReporter : REPORTERS[output];
  return factory({
    write: (s) => process.stdout.write(s),
    color: output === 'text' && color,
    verbosity: opts.verbosity,
    diff: opts.diff,
    tty: process.stdout.isTTY === true,
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
