/**
 * A managed run as a shard: the hooks the executor uses (the fleet's coordinator, or an
 * independent shard without a fleet run) and the shard's report in the fleet's object at the
 * start and the end of the run.
 */
import { EXIT } from '../core/exit.js';
import type { RunSummary } from '../executor/playbook-run.js';
import type { FleetHooks } from '../executor/fleet.js';
import { connect } from '../k8s/client.js';
import { errorMessage } from '../load/errors.js';
import type { RunEvent } from '../report/events.js';
import type { ShardReport } from './contract.js';
import { FleetCoordinator } from './coordinator.js';
import { independentShard } from './local.js';
import { shardClusters } from './partition.js';
import type { ShardSpec } from './spec.js';

export type { ShardSpec } from './spec.js';

/** What a managed run tells the shard. */
export interface ShardRunInfo {
  runId: string;
  resumedFrom?: string;
  /** The inventory's clusters after `--limit` (the whole fleet's). */
  clusters: string[];
  signal: AbortSignal;
  emit(e: RunEvent): void;
}

/** An open shard. */
export interface OpenShard {
  hooks: FleetHooks;
  /** Write the shard's final report. Never throws: a failure is a warning. */
  finish(summary: RunSummary): Promise<void>;
  /** The run crashed: say so in the report. Never throws. */
  crashed(e: unknown): Promise<void>;
}

/** Open the shard of `spec` (connecting to the management cluster for a fleet run). */
export async function openShard(spec: ShardSpec, info: ShardRunInfo): Promise<OpenShard> {
  const mine = shardClusters(info.clusters, spec.index, spec.shards);
  info.emit({ type: 'log', level: 'info', cluster: '', task: '', msg: `shard ${spec.index}/${spec.shards}${spec.fleetRun ? ` of fleet run ${spec.fleetRun}` : ''}: ${mine.length} of ${info.clusters.length} cluster(s)` });
  if (!spec.fleetRun) {
    const hooks = independentShard(spec.index, spec.shards);
    return { hooks, finish: () => Promise.resolve(), crashed: () => Promise.resolve() };
  }
  const client = await connect({ name: 'fleet (management cluster)', context: spec.context, ...(spec.kubeconfig ? { kubeconfig: spec.kubeconfig } : {}) });
  const coord = await FleetCoordinator.open(
    client,
    {
      fleetRun: spec.fleetRun,
      namespace: spec.namespace,
      index: spec.index,
      shards: spec.shards,
      onWait: (msg) => info.emit({ type: 'warning', msg }),
    },
    info.signal,
  );
  const started = new Date().toISOString();
  const base: Omit<ShardReport, 'state' | 'recap'> = {
    shard: spec.index,
    shards: spec.shards,
    run_id: info.runId,
    ...(info.resumedFrom ? { resumed_from: info.resumedFrom } : {}),
    started,
    clusters: mine,
  };
  await coord.report({ ...base, state: 'running', recap: {} }, info.signal);
  const write = async (r: ShardReport): Promise<void> => {
    try {
      await coord.report(r);
    } catch (e) {
      info.emit({ type: 'warning', msg: `could not write shard ${spec.index}'s report to the fleet run ${spec.fleetRun}: ${errorMessage(e)}` });
    }
  };
  return {
    hooks: coord,
    finish: (summary) =>
      write({
        ...base,
        state: summary.interrupted ? 'interrupted' : summary.stopReason ? 'stopped' : summary.exitCode === EXIT.ok ? 'finished' : 'failed',
        finished: new Date().toISOString(),
        recap: summary.stats,
        ...(summary.stopReason ? { stop_reason: summary.stopReason } : {}),
        exit_code: summary.exitCode,
      }),
    crashed: (e) => write({ ...base, state: 'failed', finished: new Date().toISOString(), recap: {}, stop_reason: `crashed: ${errorMessage(e)}` }),
  };
}
