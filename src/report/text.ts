/**
 * The human reporter, shaped like ansible-playbook's output: PLAY / TASK banners, one line per
 * cluster result, per-item lines for loops, retries, unified diffs with `--diff`, and a PLAY
 * RECAP table. Colours via chalk, off when not a TTY or NO_COLOR is set.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import { stringify } from 'yaml';
import { emptyStats, type EventHandlers, type RunEvent } from './events.js';
import { unifiedDiff } from './diff.js';

/** Options shared by reporters. */
export interface ReporterOptions {
  write: (s: string) => void;
  color: boolean;
  /** 0 normal, 1 `-v`, 2 `-vv`. */
  verbosity: number;
  /** Print diffs (`--diff`). */
  diff: boolean;
  /** Stderr is a TTY: live progress lines are allowed. */
  tty: boolean;
  /** Writes to stderr (where ansible-core puts warnings); `write` when absent. */
  writeErr?: (s: string) => void;
  /** Masks secrets in text a reporter reads itself (the source lines `-o ansible` quotes). */
  mask?: (s: string) => string;
  /** ansible-core's display settings, for `-o ansible`. */
  ansible?: AnsibleDisplay;
}

/** ansible-core's settings of its default callback and display that `-o ansible` follows. */
export interface AnsibleDisplay {
  /** `display_skipped_hosts` (`ANSIBLE_DISPLAY_SKIPPED_HOSTS`). */
  displaySkippedHosts: boolean;
  /** `display_ok_hosts` (`ANSIBLE_DISPLAY_OK_HOSTS`). */
  displayOkHosts: boolean;
  /** The ansible.cfg in use, for `Using FILE as config file` at -v. */
  configFile?: string;
}

/** A reporter consumes events. */
export interface Reporter {
  handle(e: RunEvent): void;
  /** Flush anything pending. */
  close(): void;
}

function banner(title: string, width = 80): string {
  const stars = Math.max(3, width - title.length - 1);
  return `${title} ${'*'.repeat(stars)}`;
}

/** Text reporter factory. */
export function textReporter(o: ReporterOptions): Reporter {
  const c: ChalkInstance = new Chalk({ level: o.color ? 1 : 0 });
  const out = (s: string): void => o.write(`${s}\n`);
  let progressShown = false;
  const clearProgress = (): void => {
    if (progressShown) {
      o.write('\r\x1b[2K');
      progressShown = false;
    }
  };
  const dataBlock = (data: Record<string, unknown> | undefined): string => {
    if (!data || Object.keys(data).length === 0) return '';
    return `\n${stringify(data, { lineWidth: 0 }).trimEnd().replace(/^/gm, '    ')}`;
  };
  const handlers: EventHandlers = {
    run_start: (e) => {
      if (e.check) out(c.cyan(`[check mode] nothing will be changed${e.diff ? '' : ' (add --diff to see what would change)'}`));
    },
    cluster_done: () => undefined,
    play_start: (e) => {
      const batch = e.batches > 1 ? ` (batch ${e.batch}/${e.batches}: ${e.clusters.join(', ')})` : '';
      out('');
      out(c.bold(banner(`PLAY [${e.play}]${batch}`)));
    },
    task_start: (e) => {
      clearProgress();
      out('');
      out(c.bold(banner(`${e.handler ? 'RUNNING HANDLER' : 'TASK'} [${e.task}]`)));
      if (o.verbosity >= 2) out(c.gray(`task path: ${e.where}`));
    },
    task_result: (e) => {
      clearProgress();
      if (e.loop_summary && e.status !== 'failed') return;
      const item = e.item !== undefined ? ` => (item=${e.item})` : '';
      const msgPart = e.msg ?? '';
      const showData = o.verbosity >= 1 ? dataBlock(e.data) : '';
      switch (e.status) {
        case 'ok':
          out(c.green(`ok: [${e.cluster}]${item}${msgPart ? ` => ${msgPart}` : ''}`) + showData);
          break;
        case 'changed':
          out(c.yellow(`changed: [${e.cluster}]${item}${msgPart ? ` => ${msgPart}` : ''}`) + showData);
          break;
        case 'skipped':
          out(c.cyan(`skipping: [${e.cluster}]${item}`) + (o.verbosity >= 1 && e.msg ? c.cyan(` => ${e.msg}`) : ''));
          break;
        case 'failed':
          out(c.red(`fatal: [${e.cluster}]${item}: FAILED! => ${e.msg ?? 'failed'}`) + showData);
          if (e.ignored) out(c.cyan('...ignoring'));
          break;
        case 'unreachable':
          out(c.red(`fatal: [${e.cluster}]: UNREACHABLE! => ${e.msg ?? ''}`));
          if (e.ignored) out(c.cyan('...ignoring'));
          break;
      }
      if (o.diff && e.diff) {
        for (const d of e.diff) {
          const text = unifiedDiff(d.before, d.after, d.label);
          if (!text) continue;
          for (const line of text.split('\n')) {
            if (line.startsWith('+') && !line.startsWith('+++')) out(c.green(line));
            else if (line.startsWith('-') && !line.startsWith('---')) out(c.red(line));
            else if (line.startsWith('@@')) out(c.cyan(line));
            else out(line);
          }
        }
      }
    },
    retry: (e) => {
      clearProgress();
      out(c.yellow(`FAILED - RETRYING: [${e.cluster}]: ${e.task} (${e.retries} retries left).${o.verbosity >= 1 && e.msg ? ` ${e.msg}` : ''}`));
    },
    warning: (e) => {
      clearProgress();
      out(c.magenta(`[WARNING]: ${e.cluster ? `[${e.cluster}] ` : ''}${e.msg}`));
    },
    log: (e) => {
      if (e.level === 'warn' || (e.level === 'info' && o.verbosity >= 1) || (e.level === 'debug' && o.verbosity >= 2)) {
        clearProgress();
        out((e.level === 'warn' ? c.magenta : c.gray)(`  [${e.cluster}] ${e.msg}`));
      }
    },
    progress: (e) => {
      if (!o.tty) return;
      o.write(`\r\x1b[2K${c.gray(`  [${e.cluster}] ${e.msg}`)}`);
      progressShown = true;
    },
    play_aborted: (e) => {
      clearProgress();
      out('');
      out(c.red(`PLAY ABORTED [${e.play}]: ${e.reason}; remaining clusters and plays are not run`));
    },
    recap: (e) => {
      clearProgress();
      out('');
      out(c.bold(banner('PLAY RECAP')));
      const names = Object.keys(e.clusters);
      const w = Math.max(10, ...names.map((n) => n.length));
      for (const name of names) {
        const s = e.clusters[name] ?? emptyStats();
        const col = s.failed || s.unreachable ? c.red : s.changed ? c.yellow : c.green;
        const f = (label: string, v: number, color: ChalkInstance): string => `${label}=${v ? color(String(v)) : v}`.padEnd(label.length + 3);
        out(
          `${col(name.padEnd(w))} : ${f('ok', s.ok, c.green)} ${f('changed', s.changed, c.yellow)} ${f('unreachable', s.unreachable, c.red)} ${f('failed', s.failed, c.red)} ${f('skipped', s.skipped, c.cyan)} ${f('rescued', s.rescued, c.green)} ${f('ignored', s.ignored, c.cyan)}`.trimEnd(),
        );
      }
      if (names.length === 0) out('(no clusters ran)');
      out('');
      const secs = (e.elapsed_ms / 1000).toFixed(1);
      out(`${e.interrupted ? c.red('interrupted — ') : ''}elapsed ${secs}s, exit code ${e.exit_code}`);
      if (e.no_hosts_matched) {
        const n = e.no_hosts_matched;
        out(c.bold.red(`NOTHING RAN: ${n === 1 ? 'the only play' : `all ${n} plays`} skipped — no hosts matched (check each play's hosts:, --limit and the inventory)`));
      }
    },
  };
  return {
    handle(e: RunEvent): void {
      (handlers[e.type] as (ev: RunEvent) => void)(e);
    },
    close(): void {
      clearProgress();
    },
  };
}
