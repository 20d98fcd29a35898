/**
 * `kplay report [RUN_ID|last] [-o FILE] [-i INV] [--record-dir DIR]`: the run report, one
 * self-contained HTML file (see `src/report/html/run.ts`) from a run record — the local one
 * (`--record-dir`, default `.kplay/runs`) when there is one, else the records in the clusters of
 * `-i INV`. Exit 0 written; 3 written, but the run's record does not verify in its clusters' hash
 * chains (edited, unlinked, inserted or reordered: `kplay history verify` says more); 1 no such run / bad flags; 4 no cluster could be read.
 */
import { setting } from '../core/settings.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { verifyChain, type ChainProblem } from '../audit/chain.js';
import { clusterChainEntries, listClusterRecordEntries, localChainEntries, readLocalRecords, type BatchRecord, type ClusterRecordEntry, type LocalRecord, type RunRecord, type TaskRecord, type WarningRecord } from '../audit/record.js';
import { EXIT, type ExitCode } from '../core/exit.js';
import { errorMessage, InputError } from '../load/errors.js';
import { isRecord } from '../core/shape.js';
import type { ClusterStats } from '../report/events.js';
import { asGateRecord } from '../report/gate.js';
import { renderRunReport, type RelatedRun, type RunReportInput } from '../report/html/run.js';
import { reportError } from './common.js';
import { clustersOf, mentions } from './history.js';

/** Flags of `kplay report`. */
export interface ReportFlags {
  inventory?: string;
  /** Only the records of these clusters (with `-i`). */
  cluster?: string;
  recordDir?: string;
  /** The HTML file (`-` for stdout); default `kplay-report-<run id>.html`. */
  out?: string;
}

/** The file name `kplay report` gives a run's report by default (links between runs use it). */
export const reportFileName = (runId: string): string => `kplay-report-${runId}.html`;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A stored task line as a task record (undefined when it is not one: an edited or foreign line). */
function asTask(v: unknown): TaskRecord | undefined {
  if (!isRecord(v)) return undefined;
  const cluster = str(v.cluster);
  const task = str(v.task);
  const status = str(v.status);
  if (cluster === undefined || task === undefined || status === undefined) return undefined;
  const gate = asGateRecord(v.gate);
  return {
    cluster,
    task,
    status,
    changed: v.changed === true,
    duration_ms: num(v.duration_ms) ?? 0,
    ...(str(v.item) !== undefined ? { item: str(v.item) } : {}),
    ...(str(v.msg) !== undefined ? { msg: str(v.msg) } : {}),
    ...(Array.isArray(v.diff) ? { diff: v.diff.filter((d): d is string => typeof d === 'string') } : {}),
    ...(num(v.start_ms) !== undefined ? { start_ms: num(v.start_ms) } : {}),
    ...(str(v.play) !== undefined ? { play: str(v.play) } : {}),
    ...(num(v.batch) !== undefined ? { batch: num(v.batch) } : {}),
    ...(str(v.module) !== undefined ? { module: str(v.module) } : {}),
    ...(v.ignored === true ? { ignored: true } : {}),
    ...(num(v.retries) !== undefined ? { retries: num(v.retries) } : {}),
    ...(str(v.waited_on) !== undefined ? { waited_on: str(v.waited_on) } : {}),
    ...(str(v.diff_text) !== undefined ? { diff_text: str(v.diff_text) } : {}),
    ...(gate ? { gate } : {}),
  };
}

const asList = <T>(v: unknown, ok: (x: Record<string, unknown>) => boolean): T[] | undefined => (Array.isArray(v) ? (v.filter((x) => isRecord(x) && ok(x)) as T[]) : undefined);
const asBatches = (v: unknown): BatchRecord[] | undefined => asList<BatchRecord>(v, (b) => typeof b.play === 'string' && typeof b.batch === 'number' && typeof b.batches === 'number' && Array.isArray(b.clusters) && typeof b.start_ms === 'number');
const asWarnings = (v: unknown): WarningRecord[] | undefined => asList<WarningRecord>(v, (w) => typeof w.msg === 'string' && typeof w.at_ms === 'number');

function asRecap(v: unknown): Record<string, ClusterStats> {
  if (!isRecord(v)) return {};
  const out: Record<string, ClusterStats> = {};
  for (const [c, s] of Object.entries(v)) {
    if (!isRecord(s)) continue;
    out[c] = { ok: num(s.ok) ?? 0, changed: num(s.changed) ?? 0, unreachable: num(s.unreachable) ?? 0, failed: num(s.failed) ?? 0, skipped: num(s.skipped) ?? 0, rescued: num(s.rescued) ?? 0, ignored: num(s.ignored) ?? 0 };
  }
  return out;
}

const playbookOf = (run: Record<string, unknown>): string => str(run.playbook) ?? '';

/** The report of a local record, with the chain of its clusters checked over the local records. */
function fromLocal(rec: LocalRecord, all: LocalRecord[], dir: string): RunReportInput {
  const { type: _type, chain: _chain, ...run } = rec.run;
  const recap = rec.lines.find((l) => l.type === 'recap');
  const { mine: problems, others } = ownProblems(rec.run_id, rec.clusters.flatMap((c) => verifyChain(c, localChainEntries(all, c))));
  return {
    run,
    tasks: rec.lines.filter((l) => l.type === 'task').flatMap((l) => asTask(l) ?? []),
    recap: asRecap(recap?.clusters),
    exit_code: num(recap?.exit_code) ?? -1,
    interrupted: recap?.interrupted === true,
    elapsed_ms: num(recap?.elapsed_ms),
    batches: asBatches(recap?.batches),
    warnings: asWarnings(recap?.warnings),
    chain: { verified: problems.length === 0, checked: `this record in the chains of the local records in ${path.relative(process.cwd(), dir) || dir}, ${rec.clusters.length} cluster(s)${rec.chain ? '' : '; this record predates record chains and carries no digest'}${othersNote(others)}`, problems },
    source: path.relative(process.cwd(), rec.file) || rec.file,
    related: related(
      all.filter((r) => playbookOf(r.run) === playbookOf(rec.run)).map((r) => {
        const rc = r.lines.find((l) => l.type === 'recap');
        return { run_id: r.run_id, started: str(r.run.started) ?? '', exit_code: num(rc?.exit_code) ?? -1, interrupted: rc?.interrupted === true };
      }),
      rec.run_id,
    ),
  };
}

/**
 * The chain problems of this run's record (it was edited, its link is broken or it was inserted
 * or reordered), apart from those of other records of the same clusters.
 */
function ownProblems(runId: string, problems: ChainProblem[]): { mine: string[]; others: number } {
  const mine = problems.filter((p) => p.run_id === runId).map((p) => p.message);
  return { mine: [...new Set(mine)], others: problems.length - mine.length };
}

const othersNote = (n: number): string => (n ? `; ${n} problem(s) with other records of these clusters: kplay history verify lists them` : '');

/** The runs of a playbook, newest first, linked (all but this one) to their reports. */
function related(runs: Omit<RelatedRun, 'href'>[], current: string): RelatedRun[] {
  const seen = new Set<string>();
  return runs
    .filter((r) => !seen.has(r.run_id) && seen.add(r.run_id))
    .sort((a, b) => b.run_id.localeCompare(a.run_id))
    .map((r) => (r.run_id === current ? r : { ...r, href: reportFileName(r.run_id) }));
}

/** The run `id` (`last`: the newest) among run ids, or undefined. A unique prefix will do; an ambiguous one is an input error. */
function pick(ids: string[], id: string): string | undefined {
  if (id === 'last') return [...ids].sort().at(-1);
  if (ids.includes(id)) return id;
  const prefixed = [...new Set(ids.filter((i) => i.startsWith(id)))].sort();
  if (prefixed.length > 1) throw new InputError(`run id '${id}' matches ${prefixed.length} runs (${prefixed.slice(0, 3).join(', ')}${prefixed.length > 3 ? ', …' : ''})`, undefined, 'give more of the run id (kplay history lists the runs)');
  return prefixed[0];
}

/** The report of a run from the records in the clusters of `-i`. */
async function fromClusters(id: string, flags: ReportFlags): Promise<{ input: RunReportInput; errors: string[] } | { errors: string[]; ids: string[] }> {
  const errors: string[] = [];
  const read: { cluster: string; entries: ClusterRecordEntry[] }[] = [];
  await Promise.all(
    (await clustersOf(flags)).map(async ({ name, client }) => {
      try {
        read.push({ cluster: name, entries: await listClusterRecordEntries(await client()) });
      } catch (e) {
        errors.push(`${name}: ${errorMessage(e)}`);
      }
    }),
  );
  read.sort((a, b) => a.cluster.localeCompare(b.cluster));
  const mine = read.flatMap(({ cluster, entries }) => entries.flatMap((e) => (e.record && mentions(e.record, cluster) ? [{ cluster, record: e.record }] : [])));
  const ids = [...new Set(mine.map((m) => m.record.run.run_id))];
  const runId = pick(ids, id);
  const found = mine.filter((m) => m.record.run.run_id === runId);
  const first = found[0];
  if (!runId || !first) return { errors, ids };
  // A cluster's record holds every inventory entry reaching it: each entry's results once.
  const tasks: TaskRecord[] = [];
  const recap: Record<string, ClusterStats> = {};
  const batches = new Map<string, BatchRecord>();
  const warnings: WarningRecord[] = [];
  const covered = new Set<string>();
  for (const { cluster, record } of found) {
    if (covered.has(cluster)) continue;
    covered.add(cluster);
    tasks.push(...record.tasks.filter((t) => t.cluster === cluster).flatMap((t) => asTask(t) ?? []));
    const s = asRecap(record.recap)[cluster];
    if (s) recap[cluster] = s;
    for (const b of asBatches(record.batches) ?? []) batches.set(`${b.play}\u0000${b.batch}`, b);
    warnings.push(...(asWarnings(record.warnings) ?? []).filter((w) => w.cluster === cluster));
  }
  tasks.sort((a, b) => (a.start_ms ?? 0) - (b.start_ms ?? 0));
  const { mine: problems, others } = ownProblems(runId, read.filter((r) => covered.has(r.cluster)).flatMap((r) => verifyChain(r.cluster, clusterChainEntries(r.entries, r.cluster))));
  const playbook = first.record.run.playbook;
  const record: RunRecord = first.record;
  return {
    errors,
    input: {
      run: { ...record.run },
      tasks,
      recap,
      exit_code: record.exit_code,
      interrupted: record.interrupted,
      elapsed_ms: num(record.elapsed_ms),
      batches: [...batches.values()].sort((a, b) => a.start_ms - b.start_ms),
      warnings: warnings.sort((a, b) => a.at_ms - b.at_ms),
      chain: { verified: problems.length === 0, checked: `this record in the chains of ${covered.size} cluster(s)${othersNote(others)}`, problems },
      source: `the run records in the clusters ${[...covered].join(', ')} (diffs are kept in the local record only)`,
      related: related(
        mine.filter((m) => m.record.run.playbook === playbook).map((m) => ({ run_id: m.record.run.run_id, started: m.record.run.started, exit_code: m.record.exit_code, interrupted: m.record.interrupted })),
        runId,
      ),
    },
  };
}

/** `kplay report`. */
export async function reportCommand(id: string | undefined, flags: ReportFlags): Promise<ExitCode> {
  try {
    const want = id ?? 'last';
    const dir = path.resolve(flags.recordDir ?? setting('recordDir'));
    const local = await readLocalRecords(dir);
    const localId = pick(local.map((r) => r.run_id), want);
    const rec = local.find((r) => r.run_id === localId);
    let input: RunReportInput;
    let code: ExitCode = EXIT.ok;
    if (rec) input = fromLocal(rec, local, dir);
    else {
      if (!flags.inventory) throw new InputError(want === 'last' ? `no run recorded in ${dir}` : `no local record of run ${want} in ${dir}`, undefined, 'pass -i INVENTORY to read the records in the clusters, or --record-dir DIR where the run wrote its record (kplay history lists the runs)');
      const got = await fromClusters(want, flags);
      for (const e of got.errors) process.stderr.write(`WARNING: cannot read records from ${e}\n`);
      if (!('input' in got)) {
        if (got.errors.length && got.ids.length === 0) {
          process.stderr.write('ERROR: no cluster could be read\n');
          return EXIT.unreachable;
        }
        throw new InputError(`no run ${want} recorded in the clusters${got.errors.length ? ' that answered' : ''}`, undefined, 'kplay history -i INVENTORY lists the recorded runs');
      }
      input = got.input;
    }
    if (!input.chain.verified) code = EXIT.drift;
    const html = renderRunReport(input);
    const runId = typeof input.run.run_id === 'string' ? input.run.run_id : want;
    const out = flags.out ?? reportFileName(runId);
    if (out === '-') process.stdout.write(html);
    else {
      await writeFile(out, html);
      process.stdout.write(`run report of ${runId} written to ${out}${input.chain.verified ? '' : ' (the record chain does NOT verify: see kplay history verify; exit 3)'}\n`);
    }
    return code;
  } catch (e) {
    return reportError(e);
  }
}
