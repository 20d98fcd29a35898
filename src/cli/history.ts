/**
 * `kplay history -i INV [--cluster C]`: list runs recorded in the clusters themselves.
 * `kplay history show RUN_ID [-i INV]`: one run — from the local record dir, else the clusters.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { listClusterRecords, type RunRecord } from '../audit/record.js';
import { connect } from '../k8s/client.js';
import { loadInventory } from '../inventory/load.js';
import { matchClusters } from '../inventory/patterns.js';
import { errorMessage, InputError } from '../load/errors.js';
import { reportError } from './common.js';

export interface HistoryFlags {
  inventory?: string;
  cluster?: string;
  limit?: string;
  recordDir?: string;
  output: string;
}

async function recordsFromClusters(flags: HistoryFlags): Promise<{ records: { cluster: string; record: RunRecord }[]; errors: string[] }> {
  if (!flags.inventory) throw new InputError('no inventory given', undefined, 'pass -i INVENTORY to read run records from the clusters');
  const inv = await loadInventory(flags.inventory, { cwd: process.cwd() });
  const names = flags.cluster ? matchClusters(inv, flags.cluster) : flags.limit ? matchClusters(inv, flags.limit) : [...inv.clusters.keys()];
  const records: { cluster: string; record: RunRecord }[] = [];
  const errors: string[] = [];
  await Promise.all(
    names.map(async (name) => {
      const c = inv.clusters.get(name);
      if (!c) return;
      try {
        const client = await connect({ name, context: c.context, kubeconfig: c.kubeconfig });
        for (const record of await listClusterRecords(client)) records.push({ cluster: name, record });
      } catch (e) {
        errors.push(`${name}: ${errorMessage(e)}`);
      }
    }),
  );
  records.sort((a, b) => b.record.run.run_id.localeCompare(a.record.run.run_id) || a.cluster.localeCompare(b.cluster));
  return { records, errors };
}

export async function historyCommand(action: string | undefined, runId: string | undefined, flags: HistoryFlags): Promise<number> {
  try {
    if (action && action !== 'show') throw new InputError(`unknown history action '${action}'`, undefined, 'use `kplay history -i INV` or `kplay history show RUN_ID`');
    if (action === 'show') {
      if (!runId) throw new InputError('kplay history show needs a RUN_ID');
      const dir = path.resolve(flags.recordDir ?? process.env.KPLAY_RECORD_DIR ?? '.kplay/runs');
      const local = await readFile(path.join(dir, `${path.basename(runId)}.jsonl`), 'utf8').catch(() => undefined);
      if (local) {
        const lines = local.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
        process.stdout.write(flags.output === 'json' ? `${JSON.stringify(lines)}\n` : stringify(lines, { lineWidth: 0 }));
        return 0;
      }
      if (!flags.inventory) throw new InputError(`no local record ${runId} in ${dir}`, undefined, 'pass -i INVENTORY to look in the clusters');
      const { records, errors } = await recordsFromClusters(flags);
      const found = records.filter((r) => r.record.run.run_id === runId);
      for (const e of errors) process.stderr.write(`WARNING: ${e}\n`);
      if (found.length === 0) throw new InputError(`no run ${runId} recorded in the clusters${errors.length ? ' that answered' : ''}`);
      const out = { run: found[0].record.run, clusters: Object.fromEntries(found.map((f) => [f.cluster, { tasks: f.record.tasks, recap: f.record.recap[f.cluster] }])) };
      process.stdout.write(flags.output === 'json' ? `${JSON.stringify(out)}\n` : stringify(out, { lineWidth: 0 }));
      return 0;
    }
    const { records, errors } = await recordsFromClusters(flags);
    for (const e of errors) process.stderr.write(`WARNING: cannot read records from ${e}\n`);
    if (flags.output === 'json') {
      process.stdout.write(`${JSON.stringify(records.map((r) => ({ cluster: r.cluster, ...r.record.run, recap: r.record.recap[r.cluster], exit_code: r.record.exit_code })))}\n`);
    } else {
      const rows = [['RUN ID', 'CLUSTER', 'STARTED', 'WHO', 'PLAYBOOK', 'CHANGED', 'FAILED', 'EXIT']];
      for (const { cluster, record } of records) {
        const s = record.recap[cluster];
        rows.push([record.run.run_id, cluster, record.run.started, record.run.user, path.basename(record.run.playbook), String(s?.changed ?? ''), String(s?.failed ?? ''), String(record.exit_code)]);
      }
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()}\n`);
      if (records.length === 0) process.stdout.write('(no runs recorded)\n');
    }
    return errors.length && records.length === 0 ? 4 : 0;
  } catch (e) {
    return reportError(e);
  }
}
