/**
 * `kplay drift PLAYBOOK -i INV [--limit]`: run the playbook in check mode and print, per
 * cluster, only what differs from the desired state (objects and fields, Helm releases, LB
 * states), secrets masked. Exit 0 no drift, 3 drift found, 2 errors (failed/unreachable tasks),
 * 1 usage errors. Tasks tagged `transient` (steps that are undone later in the same playbook,
 * such as draining a load balancer) are skipped unless named in --tags.
 */
import { stringify } from 'yaml';
import { EXIT } from '../executor/run.js';
import type { RunEvent } from '../report/events.js';
import { unifiedDiff } from '../report/diff.js';
import type { DiffEntry } from '../sdk/module.js';
import { listOption, loadAll, reportError, type Loaded } from './common.js';
import { executeRun, type RunFlags } from './run.js';

interface DriftItem {
  task: string;
  item?: string;
  msg?: string;
  diff: DiffEntry[];
}

interface DriftProblem {
  task: string;
  status: string;
  msg?: string;
}

export async function driftCommand(playbook: string, flags: RunFlags): Promise<number> {
  let loaded: Loaded | undefined;
  try {
    loaded = await loadAll(playbook, flags, true);
    const drift = new Map<string, DriftItem[]>();
    const problems = new Map<string, DriftProblem[]>();
    const seen = new Set<string>();
    const tags = listOption(flags.tags);
    const skip = [...listOption(flags.skipTags), ...(tags.includes('transient') ? [] : ['transient'])];
    const onEvent = (e: RunEvent): void => {
      if (e.type === 'play_start') e.clusters.forEach((c) => seen.add(c));
      if (e.type !== 'task_result' || e.loop_summary) return;
      if (e.status === 'changed') {
        const list = drift.get(e.cluster) ?? [];
        list.push({ task: e.task, item: e.item, msg: e.msg, diff: (e.diff ?? []).filter((d) => d.before !== d.after) });
        drift.set(e.cluster, list);
      } else if ((e.status === 'failed' && !e.ignored) || e.status === 'unreachable') {
        const list = problems.get(e.cluster) ?? [];
        list.push({ task: e.task, status: e.status, msg: e.msg });
        problems.set(e.cluster, list);
      }
    };
    if (flags.verbose > 0) process.stderr.write('running the playbook in check mode...\n');
    const { summary } = await executeRun({ ...flags, check: true, diff: true, skipTags: skip, lock: false }, onEvent, loaded);
    const driftFound = [...drift.values()].some((l) => l.length > 0);
    const errors = [...problems.values()].some((l) => l.length > 0);
    const code = summary.interrupted ? EXIT.interrupted : errors ? EXIT.failed : driftFound ? EXIT.drift : EXIT.ok;
    const clusters = [...seen];
    if (flags.output === 'json') {
      const out = {
        drift: driftFound,
        exit_code: code,
        clusters: Object.fromEntries(clusters.map((c) => [c, { drift: drift.get(c) ?? [], errors: problems.get(c) ?? [] }])),
      };
      process.stdout.write(`${JSON.stringify(out)}\n`);
      return code;
    }
    const w = (s: string): boolean => process.stdout.write(`${s}\n`);
    for (const c of clusters) {
      const items = drift.get(c) ?? [];
      const probs = problems.get(c) ?? [];
      if (items.length === 0 && probs.length === 0) {
        w(`${c}: in sync`);
        continue;
      }
      w(`${c}: ${items.length ? `DRIFT in ${items.length} task(s)` : ''}${items.length && probs.length ? ', ' : ''}${probs.length ? `${probs.length} error(s)` : ''}`);
      for (const it of items) {
        w(`  - ${it.task}${it.item ? ` (item=${it.item})` : ''}${it.msg ? `: ${it.msg}` : ''}`);
        if (flags.diff === false) continue; // --no-diff: summaries only
        for (const d of it.diff) {
          const text = unifiedDiff(d.before, d.after, d.label);
          if (text) w(text.replace(/^/gm, '      '));
        }
      }
      for (const p of probs) w(`  ! ${p.task}: ${p.status.toUpperCase()}: ${p.msg ?? ''}`);
    }
    w('');
    w(driftFound ? `drift found (exit ${code})` : errors ? `errors while checking (exit ${code})` : 'no drift: every cluster matches the playbook');
    if (flags.verbose > 1) w(stringify({ recap: summary.stats }));
    return code;
  } catch (e) {
    return reportError(e, loaded?.masker);
  }
}
