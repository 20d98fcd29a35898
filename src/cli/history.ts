/**
 * `kplay history -i INV [filters]`: runs recorded in the clusters themselves; without `-i`, the
 * local records (`--record-dir`, default `.kplay/runs`). Filters: `--cluster`, `--user`,
 * `--playbook`, `--since`, `--until`, `--outcome`.
 * `kplay history show RUN_ID [-i INV]`: one run — from the local record dir, else the clusters.
 * `kplay history verify [--record-dir DIR] [-i INV]`: check the hash chains of the local and/or
 * in-cluster records; exit 0 intact, 3 a record was edited, removed, inserted or reordered, 4 no
 * cluster could be read.
 */
import { setting } from '../core/settings.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { verifyChain, type ChainProblem } from '../audit/chain.js';
import { clusterChainEntries, listClusterRecordEntries, localChainEntries, readLocalRecords, type RunRecord } from '../audit/record.js';
import { connect } from '../k8s/client.js';
import { loadInventory } from '../inventory/resolve.js';
import { matchClusters } from '../inventory/patterns.js';
import { errorMessage, InputError } from '../load/errors.js';
import type { KubeClient } from '../k8s/types.js';
import { tableLines } from '../report/table.js';
import { isRecord } from '../core/shape.js';
import { reportError } from './common.js';
import { EXIT, type ExitCode } from '../core/exit.js';

/** Flags of `kplay history`. */
export interface HistoryFlags {
  inventory?: string;
  cluster?: string;
  limit?: string;
  recordDir?: string;
  output: string;
  /** Only runs by this user (OS user of the machine that ran them). */
  user?: string;
  /** Only runs of this playbook (file name or path suffix). */
  playbook?: string;
  /** Only runs started at or after this time (ISO date/time, or a duration such as `24h`, `7d`). */
  since?: string;
  /** Only runs started before this time. */
  until?: string;
  /** Only runs with this outcome. */
  outcome?: string;
  /** Only the shards' runs of this fleet run (`kplay run --shard I/N --fleet-run ID`), merged into one listing. */
  fleetRun?: string;
}

/** A run of the listing, from a cluster or a local record. */
interface Listed {
  cluster: string;
  run_id: string;
  started: string;
  user: string;
  playbook: string;
  changed?: number;
  failed?: number;
  exit_code: number;
  interrupted: boolean;
  /** The fleet run and shard (0-based) this run was, when it was a shard. */
  fleet_run?: string;
  shard?: number;
}

const OUTCOMES = ['success', 'failed', 'interrupted', 'changed', 'unchanged'] as const;

const recordDir = (flags: HistoryFlags): string => path.resolve(flags.recordDir ?? setting('recordDir'));

/** `--since 24h` / `7d` / `30m`, or an ISO time. */
function parseTime(value: string, flag: string): number {
  const rel = /^(\d+)([smhd])$/.exec(value);
  if (rel) return Date.now() - Number(rel[1]) * { s: 1e3, m: 6e4, h: 36e5, d: 864e5 }[rel[2] as 's' | 'm' | 'h' | 'd'];
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new InputError(`${flag} '${value}' is not a time`, undefined, 'give an ISO date/time (2026-11-23, 2026-11-23T10:00Z) or a duration back from now (30m, 24h, 7d)');
  return t;
}

/** The filter of the listing flags. */
function filterOf(flags: HistoryFlags): (l: Listed) => boolean {
  const since = flags.since ? parseTime(flags.since, '--since') : undefined;
  const until = flags.until ? parseTime(flags.until, '--until') : undefined;
  if (flags.outcome && !(OUTCOMES as readonly string[]).includes(flags.outcome)) throw new InputError(`--outcome '${flags.outcome}' is not one of ${OUTCOMES.join(', ')}`);
  return (l) => {
    if (flags.fleetRun !== undefined && l.fleet_run !== flags.fleetRun) return false;
    if (flags.user && l.user !== flags.user) return false;
    if (flags.playbook && !(l.playbook === flags.playbook || l.playbook.endsWith(`/${flags.playbook}`) || path.basename(l.playbook) === flags.playbook)) return false;
    const t = Date.parse(l.started);
    if (since !== undefined && !(t >= since)) return false;
    if (until !== undefined && !(t < until)) return false;
    switch (flags.outcome) {
      case 'success':
        return l.exit_code === EXIT.ok;
      case 'failed':
        return l.exit_code !== EXIT.ok && !l.interrupted;
      case 'interrupted':
        return l.interrupted;
      case 'changed':
        return (l.changed ?? 0) > 0;
      case 'unchanged':
        return l.changed === 0;
      default:
        return true;
    }
  };
}

/** The clusters named by the flags, connected lazily. */
export async function clustersOf(flags: Pick<HistoryFlags, 'inventory' | 'cluster' | 'limit'>): Promise<{ name: string; client: () => Promise<KubeClient> }[]> {
  if (!flags.inventory) throw new InputError('no inventory given', undefined, 'pass -i INVENTORY to read run records from the clusters');
  const inv = await loadInventory(flags.inventory, { cwd: process.cwd() });
  const names = flags.cluster ? matchClusters(inv, flags.cluster) : flags.limit ? matchClusters(inv, flags.limit) : [...inv.clusters.keys()];
  return names.flatMap((name) => {
    const c = inv.clusters.get(name);
    return c ? [{ name, client: () => connect({ name, context: c.context, kubeconfig: c.kubeconfig }) }] : [];
  });
}

async function recordsFromClusters(flags: HistoryFlags): Promise<{ records: { cluster: string; record: RunRecord }[]; errors: string[] }> {
  const records: { cluster: string; record: RunRecord }[] = [];
  const errors: string[] = [];
  await Promise.all(
    (await clustersOf(flags)).map(async ({ name, client }) => {
      try {
        // A cluster's records hold every inventory entry that reaches it: keep those of this entry.
        for (const e of await listClusterRecordEntries(await client())) if (e.record && mentions(e.record, name)) records.push({ cluster: name, record: e.record });
      } catch (e) {
        errors.push(`${name}: ${errorMessage(e)}`);
      }
    }),
  );
  records.sort((a, b) => b.record.run.run_id.localeCompare(a.record.run.run_id) || a.cluster.localeCompare(b.cluster));
  return { records, errors };
}

/** Whether a record holds results of the inventory entry `name`. */
export function mentions(record: RunRecord, name: string): boolean {
  return name in record.recap || record.tasks.some((t) => t.cluster === name);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A record header's fleet run and shard, as listing fields (none for a run that was no shard of a fleet). */
function fleetOf(header: unknown): Pick<Listed, 'fleet_run' | 'shard'> {
  const f = isRecord(header) && isRecord(header.fleet) ? header.fleet : undefined;
  return f && typeof f.run === 'string' ? { fleet_run: f.run, ...(typeof f.shard === 'number' ? { shard: f.shard } : {}) } : {};
}

/** Local records as listing rows (one per cluster of each run). */
async function listLocal(flags: HistoryFlags): Promise<Listed[]> {
  const out: Listed[] = [];
  for (const r of (await readLocalRecords(recordDir(flags))).reverse()) {
    const recap = r.lines.find((l) => l.type === 'recap');
    const stats = typeof recap?.clusters === 'object' && recap.clusters !== null ? (recap.clusters as Record<string, Record<string, unknown>>) : {};
    const clusters = flags.cluster ? r.clusters.filter((c) => c === flags.cluster) : r.clusters;
    for (const c of clusters.length ? clusters : flags.cluster ? [] : ['-']) {
      out.push({ cluster: c, run_id: r.run_id, started: str(r.run.started), user: str(r.run.user), playbook: str(r.run.playbook), changed: num(stats[c]?.changed), failed: num(stats[c]?.failed), exit_code: num(recap?.exit_code) ?? -1, interrupted: recap?.interrupted === true, ...fleetOf(r.run) });
    }
  }
  return out;
}

function printTable(rows: Listed[], output: string): void {
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return;
  }
  // a shard's run shows its fleet run and shard, so the shards' runs of one window read as one listing
  const shards = rows.some((r) => r.fleet_run !== undefined);
  const table = [
    ['RUN ID', ...(shards ? ['FLEET RUN', 'SHARD'] : []), 'CLUSTER', 'STARTED', 'WHO', 'PLAYBOOK', 'CHANGED', 'FAILED', 'EXIT'],
    ...rows.map((r) => [r.run_id, ...(shards ? [r.fleet_run ?? '-', r.shard === undefined ? '-' : String(r.shard)] : []), r.cluster, r.started, r.user, path.basename(r.playbook), String(r.changed ?? ''), String(r.failed ?? ''), r.interrupted ? `${r.exit_code} (interrupted)` : String(r.exit_code)]),
  ];
  for (const line of tableLines(table)) process.stdout.write(`${line}\n`);
  if (rows.length === 0) process.stdout.write('(no runs recorded)\n');
  else if (shards) process.stdout.write(summaryLine(rows));
}

/**
 * The clusters of the listed runs by their latest run (a resumed shard's clusters count by the run
 * that finished them): how many ended clean, changed, failed.
 */
function summaryLine(rows: Listed[]): string {
  const latest = new Map<string, Listed>();
  for (const r of rows) {
    const seen = latest.get(r.cluster);
    if (r.cluster !== '-' && (seen === undefined || r.run_id > seen.run_id)) latest.set(r.cluster, r);
  }
  const all = [...latest.values()];
  const failed = all.filter((r) => (r.failed ?? 0) > 0).length;
  const changed = all.filter((r) => (r.failed ?? 0) === 0 && (r.changed ?? 0) > 0).length;
  return `${all.length} cluster(s) by their latest run: ${failed} failed, ${changed} changed, ${all.length - failed - changed} unchanged\n`;
}

/** Verify the chains: local records (always), in-cluster ones with `-i`. */
async function verify(flags: HistoryFlags): Promise<ExitCode> {
  const problems: (ChainProblem & { scope: 'local' | 'cluster' })[] = [];
  const checked: { scope: string; cluster: string; records: number }[] = [];
  const errors: string[] = [];
  const dir = recordDir(flags);
  const local = await readLocalRecords(dir);
  const localClusters = [...new Set(local.flatMap((r) => r.clusters))].filter((c) => !flags.cluster || c === flags.cluster).sort();
  for (const c of localClusters) {
    const entries = localChainEntries(local, c);
    // a chained record that claims the cluster but lost its link entry entirely
    problems.push(...verifyChain(c, entries).map((p) => ({ ...p, scope: 'local' as const, message: `local: ${p.message}` })));
    checked.push({ scope: `local ${dir}`, cluster: c, records: entries.length });
  }
  if (flags.inventory) {
    await Promise.all(
      (await clustersOf(flags)).map(async ({ name, client }) => {
        try {
          const entries = clusterChainEntries(await listClusterRecordEntries(await client()), name);
          problems.push(...verifyChain(name, entries).map((p) => ({ ...p, scope: 'cluster' as const, message: `cluster ${name}: ${p.message}` })));
          checked.push({ scope: 'cluster', cluster: name, records: entries.length });
        } catch (e) {
          errors.push(`${name}: ${errorMessage(e)}`);
        }
      }),
    );
  }
  const code = problems.length ? EXIT.drift : errors.length && checked.every((c) => c.scope !== 'cluster') && flags.inventory ? EXIT.unreachable : EXIT.ok;
  if (flags.output === 'json') {
    process.stdout.write(`${JSON.stringify({ intact: problems.length === 0, checked, problems, errors, exit_code: code })}\n`);
    return code;
  }
  for (const c of checked.sort((a, b) => a.scope.localeCompare(b.scope) || a.cluster.localeCompare(b.cluster))) {
    const mine = problems.filter((p) => p.cluster === c.cluster && p.scope === (c.scope === 'cluster' ? 'cluster' : 'local'));
    process.stdout.write(`${c.scope === 'cluster' ? `cluster ${c.cluster}` : `${c.scope} (${c.cluster})`}: ${c.records} record(s), ${mine.length ? `${mine.length} problem(s)` : 'chain intact'}\n`);
    for (const p of mine) process.stdout.write(`  ! ${p.kind.toUpperCase()}: ${p.message}\n`);
  }
  for (const e of errors) process.stderr.write(`WARNING: cannot read records from ${e}\n`);
  if (checked.length === 0) process.stdout.write(`no records to verify (looked in ${dir}${flags.inventory ? ' and the clusters' : ''})\n`);
  process.stdout.write(problems.length ? `the audit trail was tampered with (exit 3)\n` : 'every record is intact\n');
  return code;
}

export async function historyCommand(action: string | undefined, runId: string | undefined, flags: HistoryFlags): Promise<ExitCode> {
  try {
    if (action && action !== 'show' && action !== 'verify') throw new InputError(`unknown history action '${action}'`, undefined, 'use `kplay history [-i INV]`, `kplay history show RUN_ID` or `kplay history verify`');
    if (action === 'verify') return await verify(flags);
    if (action === 'show') {
      if (!runId) throw new InputError('kplay history show needs a RUN_ID');
      const dir = recordDir(flags);
      const local = await readFile(path.join(dir, `${path.basename(runId)}.jsonl`), 'utf8').catch(() => undefined);
      if (local) {
        const lines = local.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
        process.stdout.write(flags.output === 'json' ? `${JSON.stringify(lines)}\n` : stringify(lines, { lineWidth: 0 }));
        return EXIT.ok;
      }
      if (!flags.inventory) throw new InputError(`no local record ${runId} in ${dir}`, undefined, 'pass -i INVENTORY to look in the clusters');
      const { records, errors } = await recordsFromClusters(flags);
      const found = records.filter((r) => r.record.run.run_id === runId);
      for (const e of errors) process.stderr.write(`WARNING: ${e}\n`);
      const first = found[0];
      if (!first) throw new InputError(`no run ${runId} recorded in the clusters${errors.length ? ' that answered' : ''}`);
      const out = { run: first.record.run, clusters: Object.fromEntries(found.map((f) => [f.cluster, { tasks: f.record.tasks.filter((t) => t.cluster === f.cluster), recap: f.record.recap[f.cluster] }])) };
      process.stdout.write(flags.output === 'json' ? `${JSON.stringify(out)}\n` : stringify(out, { lineWidth: 0 }));
      return EXIT.ok;
    }
    const keep = filterOf(flags);
    if (!flags.inventory) {
      printTable((await listLocal(flags)).filter(keep), flags.output);
      return EXIT.ok;
    }
    const { records, errors } = await recordsFromClusters(flags);
    for (const e of errors) process.stderr.write(`WARNING: cannot read records from ${e}\n`);
    const rows = records
      .map(({ cluster, record }): Listed => ({ cluster, run_id: record.run.run_id, started: record.run.started, user: record.run.user, playbook: record.run.playbook, changed: record.recap[cluster]?.changed, failed: record.recap[cluster]?.failed, exit_code: record.exit_code, interrupted: record.interrupted, ...fleetOf(record.run) }))
      .filter(keep);
    printTable(rows, flags.output);
    return errors.length && records.length === 0 ? EXIT.unreachable : EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}
