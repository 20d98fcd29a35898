/**
 * The command-line options several kplay commands share (`run`, `plan`, `drift`, `validate`,
 * `fleet job`, …), declared once: flags, help, parser and default. A command takes one with
 * {@link opt}, and may say what the option means for it (`-f`: "clusters checked in parallel" in
 * `kplay plan`) without declaring it again.
 */
import { Option } from 'commander';
import { DEFAULT_FORKS } from '../core/settings-table.js';
import { DEFAULT_MAX_INPUT_BYTES } from '../load/yaml.js';

/** A repeatable option's values, in order (`-e a -e b`). */
export const collect = (v: string, prev: string[] = []): string[] => [...prev, v];
/** A counting flag (`-v`, `-vv`). */
export const increase = (_: string, prev: number): number => prev + 1;

/** One shared option. */
interface SharedOption {
  /** Commander's flags (`-i, --inventory <inventory>`). */
  flags: string;
  /** The help line, unless the command says otherwise. */
  help: string;
  /** `collect` (repeatable), `increase` (counting flag), or none. */
  parse?: 'collect' | 'increase';
  /** The default, as commander shows it. */
  default?: string | number;
}

/** Every shared option, by the name its value has in the command's flags. */
export const SHARED_OPTIONS = {
  inventory: { flags: '-i, --inventory <inventory>', help: 'inventory file, directory, or name under inventories/' },
  extraVars: { flags: '-e, --extra-vars <vars>', help: 'extra variables: k=v, @file.yml or a {map} (repeatable; highest precedence)', parse: 'collect' },
  maxInputBytes: { flags: '--max-input-bytes <n>', help: 'refuse input files (playbooks, inventories, vars) larger than this', default: String(DEFAULT_MAX_INPUT_BYTES) },
  limit: { flags: '-l, --limit <pattern>', help: 'further limit the clusters (host pattern)' },
  tags: { flags: '-t, --tags <tags>', help: 'only run tasks with these tags (comma-separated, repeatable)', parse: 'collect' },
  skipTags: { flags: '--skip-tags <tags>', help: 'skip tasks with these tags', parse: 'collect' },
  forks: { flags: '-f, --forks <n>', help: 'clusters worked on in parallel', default: String(DEFAULT_FORKS) },
  modulePath: { flags: '-M, --module-path <dir>', help: 'extra module directory (repeatable)', parse: 'collect' },
  verbose: { flags: '-v, --verbose', help: 'more output (-vv for even more)', parse: 'increase', default: 0 },
  noColor: { flags: '--no-color', help: 'no colours (also when NO_COLOR is set or output is not a TTY)' },
  noLock: { flags: '--no-lock', help: 'do not take the per-cluster lock (recorded in the run record)' },
  lockTimeout: { flags: '--lock-timeout <seconds>', help: "wait this long for another run's cluster lock", default: '60' },
  recordDir: { flags: '--record-dir <dir>', help: 'where local run records go (default .kplay/runs, or KPLAY_RECORD_DIR)' },
  keepRecords: { flags: '--keep-records <n>', help: 'run records kept per cluster', default: '20' },
} as const satisfies Record<string, SharedOption>;

/** The name of a shared option. */
export type SharedOptionName = keyof typeof SHARED_OPTIONS;

/** The options that select what a run covers: the inventory, extra vars, input cap, limit and tags. */
export const SELECTION: readonly SharedOptionName[] = ['inventory', 'extraVars', 'maxInputBytes', 'limit', 'tags', 'skipTags'];

/**
 * A shared option as a commander Option; `help` replaces its help line for one command.
 * @example program.command('plan').addOption(opt('forks', 'clusters checked in parallel'))
 */
export function opt(name: SharedOptionName, help?: string): Option {
  const o: SharedOption = SHARED_OPTIONS[name];
  const option = new Option(o.flags, help ?? o.help);
  if (o.parse === 'collect') option.argParser(collect);
  if (o.parse === 'increase') option.argParser(increase);
  if (o.default !== undefined) option.default(o.default);
  return option;
}
