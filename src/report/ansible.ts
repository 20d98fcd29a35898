/**
 * `-o ansible`: ansible-core 2.19's default stdout callback (plugins/callback/default.py), line for
 * line, for the scripts that read ansible-playbook's output: PLAY / TASK / RUNNING HANDLER banners
 * filled with `*` to 80 columns, `ok: [h]`, `changed: [h]`, `skipping: [h]`, `fatal: [h]: FAILED! =>`
 * with the result as `_dump_results` dumps it (`debug` always, the others at -v), loop items,
 * `included: FILE for HOSTS`, `[WARNING]:` on stderr, `--diff` as difflib writes it, the PLAY
 * RECAP with its column padding. Colours as ansible-core's (`\033[0;32m`…), only when asked for.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DiffEntry } from '../core/module.js';
import { emptyStats, type EventHandlers, type RunEvent } from './events.js';
import { ansibleDiff } from './ansible-diff.js';
import { callbackResult, cleanResult, dumpResult, itemLabel, verboseAlways } from './ansible-result.js';
import type { Reporter, ReporterOptions } from './text.js';

type TaskResult = Extract<RunEvent, { type: 'task_result' }>;

/** ansible-core's default colours (`COLOR_*`) as SGR codes. */
const COLORS = {
  ok: '0;32',
  changed: '0;33',
  skip: '0;36',
  error: '0;31',
  unreachable: '1;31',
  warn: '1;35',
  deprecate: '0;35',
  debug: '1;30',
  verbose: '0;34',
  included: '0;36',
} as const;

type Color = keyof typeof COLORS;

/** ansible-core's display width without a terminal (`max(79, tty_size - 1)`). */
const COLUMNS = 79;

/** What ansible-core's `SourceContext.from_origin` prints for `file:line:col`: two lines before, the line, a column marker. */
export function sourceContext(where: string, mask: (s: string) => string = (s) => s): string {
  const m = /^(.*):(\d+):(\d+)$/.exec(where);
  if (!m) return `Origin: ${where}`;
  const [, file, lineS, colS] = m as unknown as [string, string, string, string];
  const line = Number(lineS);
  const col = Number(colS);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return `Origin: ${where}\n\n(source not shown: ${e instanceof Error && 'code' in e && e.code === 'ENOENT' ? 'FileNotFoundError' : 'OSError'})`;
  }
  if (text.startsWith('$ANSIBLE_VAULT;')) return `Origin: ${where}\n\n(source not shown: content encrypted)`;
  const all = text.split('\n');
  const start = Math.max(0, line - 1 - 2);
  if (all.length < line) return `Origin: ${where}\n\n(source not shown: file truncated)`;
  const width = String(line).length;
  const maxLen = 120 - width - 1;
  let usable = maxLen;
  const out: string[] = [];
  for (let i = start; i < line; i++) {
    let l = (all[i] ?? '').replace(/\t/g, ' ');
    if (l.length > maxLen) {
      l = `${l.slice(0, maxLen - 3)}...`;
      usable = maxLen - 3;
    }
    out.push(`${String(i + 1).padStart(width)}${l ? ' ' : ''}${mask(l)}`);
  }
  if (col >= 1 && usable >= col) {
    let marker = `column ${col}`;
    marker = col - 1 + 2 + marker.length > maxLen ? `${' '.repeat(col - 1 - marker.length - 1)}${marker} ^` : `${' '.repeat(col - 1)}^ ${marker}`;
    out.push(`${' '.repeat(width)} ${marker}`);
  }
  return `Origin: ${where}\n\n${out.join('\n')}`;
}

/** Modules ansible-core runs as action plugins that fail with `Action failed:` (the others' failures are `Module failed:`). */
const ACTION_FAILS = new Set(['fail', 'assert', 'ansible.builtin.fail', 'ansible.builtin.assert']);

/** A task's name as ansible-core's `get_name()` gives it: an unnamed include is `include_tasks`, `include_role : ROLE`. */
function taskName(t: Extract<RunEvent, { type: 'task_start' }>): string {
  const name = t.task.trim();
  if (t.module === 'include_tasks' && name.startsWith('include_tasks: ')) return 'include_tasks';
  if (t.module === 'include_role' && name.startsWith('include_role: ')) return `include_role : ${name.slice('include_role: '.length)}`;
  return name;
}

/** The ansible-core default-callback reporter. */
export function ansibleReporter(o: ReporterOptions): Reporter {
  const settings = o.ansible ?? { displaySkippedHosts: true, displayOkHosts: true };
  const mask = o.mask ?? ((s: string) => s);
  const paint = (s: string, c: Color | undefined): string =>
    o.color && c
      ? s
          .split('\n')
          .map((l) => `\x1b[${COLORS[c]}m${l}\x1b[0m`)
          .join('\n')
      : s;
  /** `Display.display`: one newline at the end, stdout or stderr. */
  const display = (msg: string, c?: Color, stderr = false): void => {
    const body = msg.endsWith('\n') ? msg.slice(0, -1) : msg;
    (stderr ? (o.writeErr ?? o.write) : o.write)(`${paint(body, c)}\n`);
  };
  const banner = (msg: string): void => {
    const m = msg.trim();
    display(`\n${m} ${'*'.repeat(Math.max(3, COLUMNS - [...m].length))}`);
  };
  const errorsShown = new Set<string>();
  const warningsShown = new Set<string>();
  let task: Extract<RunEvent, { type: 'task_start' }> | undefined;
  let bannerShown = false;
  /** `included:` lines wait for every host of the include (ansible-core prints one line per file). */
  const included = new Map<string, string[]>();
  /** Diffs of a loop's items, shown when the loop ends (ansible-core's `v2_on_file_diff` of the loop's result). */
  let loopDiffs: DiffEntry[] = [];
  const flushIncluded = (): void => {
    for (const [file, hosts] of included) display(`included: ${file} for ${hosts.join(', ')}`, 'included');
    included.clear();
  };
  const taskBanner = (): void => {
    if (!task || bannerShown) return;
    bannerShown = true;
    banner(`${task.handler ? 'RUNNING HANDLER' : 'TASK'} [${taskName(task)}]`);
    if (o.verbosity >= 2) display(`task path: ${task.where.replace(/:\d+$/, '')}`, 'debug');
  };
  const showDiffs = (diffs: DiffEntry[] | undefined): void => {
    if (!o.diff || !diffs) return;
    const text = diffs.map((d) => ansibleDiff(d, (l, kind) => paint(l, kind === 'add' ? 'ok' : kind === 'remove' ? 'error' : 'skip'))).join('');
    if (!text) return;
    taskBanner();
    display(text);
  };
  /** Handler → hosts notified, announced (-vv) when the handlers run. */
  const notified = new Map<string, string[]>();
  const notify = (e: TaskResult): void => {
    for (const h of e.notified ?? []) {
      if (o.verbosity >= 2) display(`Notification for handler ${h} has been saved.`, 'verbose');
      const hosts = notified.get(h) ?? [];
      if (!hosts.includes(e.cluster)) hosts.push(e.cluster);
      notified.set(h, hosts);
    }
  };
  const verbose = (e: TaskResult): boolean => o.verbosity > 0 || verboseAlways(e);
  const dump = (e: TaskResult, r: Record<string, unknown>): string => dumpResult(r, { verbosity: o.verbosity, always: verboseAlways(e) });
  /** ansible-core's `[ERROR]: Task failed: …` before a failed result (shown once per message a run). */
  const taskError = (e: TaskResult): void => {
    if (e.included !== undefined) return;
    const kind = e.module && ACTION_FAILS.has(e.module) ? 'Action' : 'Module';
    const origin = task?.where ? `\n${sourceContext(task.where, mask)}` : '';
    const msg = `Task failed: ${kind} failed: ${e.msg ?? 'failed'}${origin}`;
    const text = `[ERROR]: ${msg}${msg.includes('\n') ? '\n\n' : '\n'}`;
    if (errorsShown.has(text)) return;
    errorsShown.add(text);
    display(text, 'error');
  };
  const itemResult = (e: TaskResult): void => {
    const r = cleanResult(callbackResult(e), e.module);
    const label = itemLabel(e);
    if (e.status === 'ok' || e.status === 'changed') {
      if (e.status === 'ok' && !settings.displayOkHosts) return;
      taskBanner();
      display(`${e.status}: [${e.cluster}] => (item=${label})${verbose(e) ? ` => ${dump(e, r)}` : ''}`, e.status === 'ok' ? 'ok' : 'changed');
      if (e.status === 'changed' && e.diff) loopDiffs.push(...e.diff);
    } else if (e.status === 'skipped') {
      if (!settings.displaySkippedHosts) return;
      taskBanner();
      display(`skipping: [${e.cluster}] => (item=${label}) ${o.verbosity > 0 ? ` => ${dump(e, r)}` : ''}`, 'skip');
    } else {
      taskBanner();
      taskError(e);
      display(`failed: [${e.cluster}] (item=${label}) => ${dump(e, r)}`, 'error');
    }
  };
  const hostResult = (e: TaskResult): void => {
    const r = cleanResult(callbackResult(e), e.module);
    switch (e.status) {
      case 'ok':
      case 'changed': {
        if (e.included !== undefined) {
          taskBanner();
          const hosts = included.get(e.included) ?? [];
          hosts.push(e.cluster);
          included.set(e.included, hosts);
          return;
        }
        if (e.loop_summary) {
          showDiffs(loopDiffs);
          loopDiffs = [];
          if (e.status === 'changed' || settings.displayOkHosts) taskBanner();
          return;
        }
        if (e.status === 'changed') showDiffs(e.diff);
        notify(e);
        if (e.status === 'ok' && !settings.displayOkHosts) return;
        taskBanner();
        display(`${e.status}: [${e.cluster}]${verbose(e) ? ` => ${dump(e, r)}` : ''}`, e.status === 'ok' ? 'ok' : 'changed');
        return;
      }
      case 'skipped':
        if (!settings.displaySkippedHosts) return;
        taskBanner();
        display(`skipping: [${e.cluster}]${o.verbosity > 0 ? ` => ${dump(e, r)}` : ''}`, 'skip');
        return;
      case 'failed':
        taskBanner();
        if (!e.loop_summary) {
          taskError(e);
          display(`fatal: [${e.cluster}]: FAILED! => ${dump(e, r)}`, 'error');
        } else loopDiffs = [];
        if (e.ignored) display('...ignoring', 'skip');
        return;
      case 'unreachable':
        taskBanner();
        display(`fatal: [${e.cluster}]: UNREACHABLE! => ${dump(e, r)}`, 'unreachable');
        if (e.ignored) display('...ignoring', 'skip');
        return;
    }
  };
  const handlers: EventHandlers = {
    run_start: (e) => {
      if (o.verbosity >= 1) display(o.ansible?.configFile ? `Using ${o.ansible.configFile} as config file` : 'No config file found; using defaults', 'verbose');
      // ansible-core loads its other stdout callbacks and says it skips them
      if (o.verbosity >= 2) for (const cb of ['minimal', 'oneline']) display(`Skipping callback '${cb}', as we already have a stdout callback.`, 'verbose');
      if (o.verbosity > 1) {
        banner(`PLAYBOOK: ${path.basename(e.playbook)}`);
        const rel = path.relative(process.cwd(), e.playbook);
        if (e.plays !== undefined) display(`${e.plays} plays in ${rel.startsWith('..') ? e.playbook : rel}`, 'verbose');
      }
    },
    play_start: (e) => {
      flushIncluded();
      task = undefined;
      banner(e.play.trim() ? `PLAY [${e.play.trim()}]` : 'PLAY');
    },
    cluster_done: () => undefined,
    task_start: (e) => {
      flushIncluded();
      if (e.handler && o.verbosity >= 2) for (const [h, hosts] of notified) for (const host of hosts) display(`NOTIFIED HANDLER ${h} for ${host}`, 'verbose');
      if (e.handler) notified.clear();
      task = e;
      bannerShown = false;
      loopDiffs = [];
      if (settings.displaySkippedHosts && settings.displayOkHosts) taskBanner();
    },
    task_result: (e) => (e.item !== undefined && !e.loop_summary ? itemResult(e) : hostResult(e)),
    retry: (e) => {
      taskBanner();
      display(`FAILED - RETRYING: [${e.cluster}]: ${e.task} (${e.retries} retries left).`, 'debug');
    },
    warning: (e) => {
      if (e.no_hosts !== undefined) {
        // ansible-core's play banner and `v2_playbook_on_no_hosts_matched`, no warning
        flushIncluded();
        banner(e.no_hosts.trim() ? `PLAY [${e.no_hosts.trim()}]` : 'PLAY');
        display('skipping: no hosts matched', 'skip');
        return;
      }
      const deprecation = /^\[DEPRECATION WARNING\]: /.test(e.msg);
      const text = deprecation ? e.msg : `[WARNING]: ${e.msg}`;
      if (warningsShown.has(text)) return;
      warningsShown.add(text);
      display(text, deprecation ? 'deprecate' : 'warn', true);
    },
    log: (e) => {
      if (e.level === 'warn') handlers.warning({ type: 'warning', msg: e.msg, cluster: e.cluster });
    },
    progress: () => undefined,
    play_aborted: (e) => {
      flushIncluded();
      // ansible-core's linear strategy says so when max_fail_percentage ends the play (not for any_errors_fatal, nor when every host failed)
      if (e.reason.startsWith('max_fail_percentage')) banner('NO MORE HOSTS LEFT');
    },
    recap: (e) => {
      flushIncluded();
      banner('PLAY RECAP');
      for (const name of Object.keys(e.clusters).sort()) {
        const s = e.clusters[name] ?? emptyStats();
        const col = (lead: string, n: number, c: Color): string => {
          const t = `${lead}=${String(n).padEnd(4)}`;
          return n !== 0 ? paint(t, c) : t;
        };
        const host = o.color ? paint(name, s.failed || s.unreachable ? 'error' : s.changed ? 'changed' : 'ok').padEnd(37) : name.padEnd(26);
        display(
          `${host} : ${col('ok', s.ok, 'ok')} ${col('changed', s.changed, 'changed')} ${col('unreachable', s.unreachable, 'unreachable')} ${col('failed', s.failed, 'error')} ${col('skipped', s.skipped, 'skip')} ${col('rescued', s.rescued, 'ok')} ${col('ignored', s.ignored, 'warn')}`,
        );
      }
      display('');
    },
  };
  return {
    handle(e: RunEvent): void {
      (handlers[e.type] as (ev: RunEvent) => void)(e);
    },
    close(): void {
      flushIncluded();
    },
  };
}
