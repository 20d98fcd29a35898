/**
 * Run a playbook: plays in order, each on its clusters in `serial` batches. Returns the exit
 * code scripts rely on (src/core/exit.ts, README "Exit codes"): `ok` all clusters succeeded ·
 * `failed` a task failed · `unreachable` a cluster was unreachable (and none failed) · `interrupted`.
 */
import { settleAsyncJobs } from './async-jobs.js';
import { matchClusters } from '../inventory/patterns.js';
import { playClusters } from '../playbook/targets.js';
import type { Play } from '../playbook/types.js';
import { templar } from '../template/index.js';
import { emptyStats, type ClusterStats } from '../report/events.js';
import { InputError } from '../load/errors.js';
import { PlayRun, type RunShared } from './play.js';
import { RunVars } from './task-vars.js';
import { DynamicInventory } from './dynamic-inventory.js';
import { ClusterState, type RunOptions } from './state.js';
import { restoreInto, type Resume } from './resume.js';
import { EXIT, type ExitCode } from '../core/exit.js';

/** The outcome of a run. */
export interface RunSummary {
  exitCode: ExitCode;
  stats: Record<string, ClusterStats>;
  interrupted: boolean;
  stopReason?: string;
  elapsedMs: number;
  clusters: ClusterState[];
}

/** Split clusters into batches by `serial` (numbers or percentages; the last size repeats). */
export function makeBatches<T>(items: T[], serial: Play['serial']): T[][] {
  if (!serial || serial.length === 0) return [items];
  const sizes = serial.map((s) => {
    if (typeof s === 'number') return Math.max(1, Math.floor(s));
    const m = /^(\d+)(%?)$/.exec(String(s).trim());
    if (!m) throw new InputError(`invalid serial value '${s}'`);
    const n = Number(m[1]);
    return Math.max(1, m[2] ? Math.floor((items.length * n) / 100) : n);
  });
  const out: T[][] = [];
  let i = 0;
  let k = 0;
  while (i < items.length) {
    const size = sizes[Math.min(k, sizes.length - 1)] ?? items.length;
    out.push(items.slice(i, i + size));
    i += size;
    k++;
  }
  return out;
}

/** The clusters in the play's `order`. */
function ordered(names: string[], order: Play['order']): string[] {
  switch (order) {
    case 'reverse_inventory':
      return [...names].reverse();
    case 'sorted':
      return [...names].sort();
    case 'reverse_sorted':
      return [...names].sort().reverse();
    case 'shuffle': {
      const out = [...names];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [out[i], out[j]] = [out[j] as string, out[i] as string];
      }
      return out;
    }
    default:
      return names;
  }
}

/** Resolve `--limit` once (an empty match is an error naming the pattern). */
export function limitSet(opts: Pick<RunOptions, 'inventory' | 'limit'>): Set<string> | undefined {
  if (!opts.limit) return undefined;
  return new Set(matchClusters(opts.inventory, opts.limit));
}

/**
 * A play `cs` finished in the resumed run: what its tasks set there (facts, registered results,
 * include_vars) is restored for the later plays, and kept in this run's journal (a resumed run can
 * be resumed in turn). Values that held a secret (or were too large) were never journaled: said once.
 */
function carryPlay(opts: RunOptions, resume: Resume, playIndex: number, cs: ClusterState): void {
  const withheld: string[] = [];
  for (const t of resume.playEntries(playIndex, cs.name)) {
    restoreInto(cs, t, false);
    withheld.push(...(t.withheld ?? []), ...(t.oversize ?? []));
    opts.journal?.carried(t);
  }
  opts.journal?.playDone(playIndex, cs.name);
  if (withheld.length) opts.emit({ type: 'warning', cluster: cs.name, msg: `variables set in play ${playIndex + 1} held a secret or were too large for the journal, and are not carried into the resumed run: ${[...new Set(withheld)].join(', ')}` });
}

/**
 * Execute the playbook. Never throws for task failures; static errors should be caught before.
 * When it is over — also after a failure or an interruption — the clusters' run-scoped adapters
 * end (helm's private kubeconfigs are removed).
 */
export async function runPlaybook(opts: RunOptions): Promise<RunSummary> {
  const states = new Map<string, ClusterState>();
  for (const c of opts.inventory.clusters.values()) states.set(c.name, new ClusterState(c));
  try {
    return await runPlays(opts, states);
  } finally {
    await Promise.all([...states.values()].map((s) => s.endAdapters()));
  }
}

async function runPlays(opts: RunOptions, states: Map<string, ClusterState>): Promise<RunSummary> {
  const t0 = Date.now();
  const inv = opts.inventory;
  const shared: RunShared = {
    opts,
    vars: new RunVars(inv, { check: opts.check, runId: opts.runId, playbookDir: opts.playbook.dir, verbosity: opts.verbosity ?? 0 }),
    started: !opts.startAtTask,
  };
  shared.dynamic = new DynamicInventory(inv, shared.vars, states, (v) => opts.masker.addDeclared(v));
  const limit = limitSet(opts);
  const touched = new Set<string>();
  opts.emit({ type: 'run_start', run_id: opts.runId, playbook: opts.playbook.file, inventory: inv.source, check: opts.check, diff: opts.diff, limit: opts.limit, time: new Date(t0).toISOString(), plays: opts.playbook.plays.length });
  const said = new Set<string>();
  let unmatchedPlays = 0;
  let failedOut = false;
  for (const [playIndex, play] of opts.playbook.plays.entries()) {
    if (shared.stopReason || opts.signal.aborted) break;
    const { clusters: matched, unmatched } = playClusters(inv, play.hosts);
    // As ansible-playbook: each term that matches nothing is a warning, and the rest of the pattern runs
    for (const u of unmatched) opts.emit({ type: 'warning', msg: `Could not match supplied host pattern, ignoring: ${u.text}${u.hint ? ` (${u.hint})` : ''}` });
    if (matched.length === 0) {
      const hostsShown = Array.isArray(play.hosts) ? play.hosts.join(',') : play.hosts;
      opts.emit({ type: 'warning', msg: `play '${play.name}': skipping: no hosts matched (hosts: ${hostsShown})`, no_hosts: play.name });
      unmatchedPlays++;
      continue;
    }
    let names = ordered(matched, play.order);
    if (limit) names = names.filter((n) => limit.has(n));
    const quiet = play.noEffect.filter((k) => !said.has(k));
    if (quiet.length && names[0]) {
      for (const k of quiet) said.add(k);
      opts.emit({ type: 'log', level: 'info', cluster: names[0], task: play.name, msg: `accepted for Ansible compatibility, no effect in kplay: ${quiet.join(', ')} (kplay runs every task on the controller against the Kubernetes API${quiet.includes('strategy') ? '; strategy free/host_pinned run as linear' : ''})` });
    }
    if (opts.fleet) {
      await runFleetPlay(opts, shared, play, playIndex, names, states, touched);
      continue;
    }
    const resume = opts.resume;
    if (resume) {
      const skipped = names.filter((n) => resume.playDone(playIndex, n));
      if (skipped.length) opts.emit({ type: 'warning', msg: `play '${play.name}': ${skipped.join(', ')} finished it in the interrupted run: not run again` });
      for (const n of skipped) carryPlay(opts, resume, playIndex, states.get(n) as ClusterState);
      names = names.filter((n) => !resume.playDone(playIndex, n));
      if (names.length === 0) continue;
    }
    const targets = names.map((n) => states.get(n) as ClusterState).filter((c) => !c.failed && !c.unreachable);
    const hosts = Array.isArray(play.hosts) ? play.hosts.join(':') : play.hosts;
    if (targets.length === 0) {
      opts.emit({ type: 'warning', msg: `play '${play.name}': no clusters left to run on (hosts: ${hosts}${opts.limit ? `, limit: ${opts.limit}` : ''})` });
      continue;
    }
    await askPrompts(play, opts);
    const batches = makeBatches(targets, play.serial);
    for (const [i, batch] of batches.entries()) {
      if (shared.stopReason || opts.signal.aborted) break;
      for (const c of batch) {
        c.ended = false;
        touched.add(c.name);
      }
      opts.emit({ type: 'play_start', play: play.name, hosts, clusters: batch.map((c) => c.name), batch: i + 1, batches: batches.length, play_clusters: targets.map((c) => c.name) });
      // ansible-core's exit code: a cluster that left the plays without a failure of its own (fatal.ts) fails the run once another play runs
      if ([...states.values()].some((c) => c.failed && c.stats.failed === 0 && !c.unreachable)) failedOut = true;
      await new PlayRun(shared, play, batch, targets, states).run();
      if (!opts.signal.aborted && !shared.stopReason) for (const c of batch) if (!c.failed && !c.unreachable) opts.emit({ type: 'cluster_done', play: play.name, play_index: playIndex, cluster: c.name });
    }
  }
  // jobs started with `async` + `poll: 0` and never waited for end before the run does (each within its bound), as a
  // background helm upgrade must not be cut off by the process exiting
  await settleAsyncJobs();
  const interrupted = opts.signal.aborted;
  const stats: Record<string, ClusterStats> = {};
  for (const name of touched) stats[name] = { ...(states.get(name) as ClusterState).stats };
  const all = Object.values(stats);
  // failures before a `meta: clear_host_errors` do not fail the run (as ansible-core's exit code)
  const failures = [...touched].some((n) => (states.get(n) as ClusterState).stats.failed > (states.get(n) as ClusterState).clearedFailures);
  const exitCode = interrupted
    ? EXIT.interrupted
    : failures
      ? EXIT.failed
      : all.some((s) => s.unreachable > 0)
        ? EXIT.unreachable
        : shared.stopReason || failedOut
          ? EXIT.failed
          : EXIT.ok;
  const elapsedMs = Date.now() - t0;
  const plays = opts.playbook.plays.length;
  opts.emit({ type: 'recap', clusters: stats, elapsed_ms: elapsedMs, exit_code: exitCode, interrupted, ...(plays > 0 && unmatchedPlays === plays ? { no_hosts_matched: plays } : {}) });
  return { exitCode, stats, interrupted, stopReason: shared.stopReason, elapsedMs, clusters: [...touched].map((n) => states.get(n) as ClusterState) };
}

export { emptyStats };

/**
 * A play in a shard of a fleet run (see fleet.ts): the `serial` batches are cut from the whole
 * fleet's clusters of the play (`names`: every shard cuts the same ones), and this shard runs its
 * own clusters of each batch. Every batch goes through the fleet, even one without a cluster of
 * this shard: the next batch starts when every shard finished this one, and not at all once the
 * fleet stopped. In a later play, a batch is cut before the clusters that failed earlier are
 * left out (a shard does not know the others' failures), so its size counts them.
 */
async function runFleetPlay(opts: RunOptions, shared: RunShared, play: Play, playIndex: number, names: string[], states: Map<string, ClusterState>, touched: Set<string>): Promise<void> {
  const fleet = opts.fleet as NonNullable<RunOptions['fleet']>;
  const resume = opts.resume;
  const mine = names.filter((n) => fleet.owns(n));
  let runnable = mine;
  if (resume) {
    const skipped = mine.filter((n) => resume.playDone(playIndex, n));
    if (skipped.length) opts.emit({ type: 'warning', msg: `play '${play.name}': ${skipped.join(', ')} finished it in the interrupted run: not run again` });
    for (const n of skipped) carryPlay(opts, resume, playIndex, states.get(n) as ClusterState);
    runnable = mine.filter((n) => !resume.playDone(playIndex, n));
  }
  const runnableSet = new Set(runnable);
  const targets = runnable.map((n) => states.get(n) as ClusterState).filter((c) => !c.failed && !c.unreachable);
  const hosts = Array.isArray(play.hosts) ? play.hosts.join(':') : play.hosts;
  if (targets.length) await askPrompts(play, opts);
  const batches = makeBatches(names, play.serial);
  for (const [i, batchNames] of batches.entries()) {
    if (shared.stopReason || opts.signal.aborted) break;
    const b = { play: playIndex, batch: i + 1, size: batchNames.length, anyErrorsFatal: play.anyErrorsFatal === true, ...(play.maxFailPercentage !== undefined ? { maxFailPercentage: play.maxFailPercentage } : {}) };
    const stopped = await fleet.beforeBatch(b, opts.signal);
    if (stopped) {
      shared.stopReason = stopped;
      opts.emit({ type: 'play_aborted', play: play.name, reason: stopped });
      break;
    }
    const batch = batchNames.filter((n) => runnableSet.has(n)).map((n) => states.get(n) as ClusterState).filter((c) => !c.failed && !c.unreachable);
    if (batch.length) {
      for (const c of batch) {
        c.ended = false;
        touched.add(c.name);
      }
      opts.emit({ type: 'play_start', play: play.name, hosts, clusters: batch.map((c) => c.name), batch: i + 1, batches: batches.length, play_clusters: targets.map((c) => c.name) });
      const run = new PlayRun(shared, play, batch, targets, states);
      run.fleetBatch = { ...b, own: batch.length };
      await run.run();
    }
    if (opts.signal.aborted) break;
    const why = await fleet.afterBatch({ ...b, own: batch.length }, batch.filter((c) => c.failed || c.unreachable).map((c) => c.name), Object.fromEntries(batch.map((c) => [c.name, { ...c.stats }])), opts.signal);
    if (!shared.stopReason) for (const c of batch) if (!c.failed && !c.unreachable) opts.emit({ type: 'cluster_done', play: play.name, play_index: playIndex, cluster: c.name });
    if (why && !shared.stopReason) {
      shared.stopReason = why;
      opts.emit({ type: 'play_aborted', play: play.name, reason: why });
    }
  }
}

/**
 * `vars_prompt` on a terminal: each variable not given with `-e` is asked before the play runs (as
 * ansible-playbook does); an empty answer takes the default (rendered with the play's variables).
 * Private answers are secrets: masked in every output.
 */
async function askPrompts(play: Play, opts: RunOptions): Promise<void> {
  const ask = opts.ask;
  if (!ask) return;
  for (const p of play.prompts) {
    if (Object.prototype.hasOwnProperty.call(opts.extraVars, p.name)) continue;
    let answer = await ask(p);
    if (p.confirm && answer !== (await ask({ ...p, prompt: `confirm ${p.prompt}` }))) throw new InputError(`vars_prompt '${p.name}': the two answers do not match`, play.pos, 'run again and give the same answer twice');
    if (answer === '' && p.default !== undefined) answer = typeof p.default === 'string' ? await templar.renderString(p.default, { ...play.vars, ...opts.extraVars }) : String(p.default);
    if (p.private && answer !== '') opts.masker.add(answer);
    play.vars[p.name] = answer;
  }
}
