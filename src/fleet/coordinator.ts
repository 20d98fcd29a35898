/**
 * A shard's side of the fleet's coordination object (contract.ts) in the management cluster:
 * every change is read → changed (budget.ts) → written with the resourceVersion read (a 409
 * Conflict is read again and retried), so concurrent shards never lose each other's updates.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError } from '../k8s/errors.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { InputError } from '../load/errors.js';
import type { FleetBatch, FleetHooks } from '../executor/fleet.js';
import { doneIn, markDone, reportFailures, reportsOf, stopOf, stopsBatch, type BatchRule, type FleetStop } from './budget.js';
import { FLEET_KEYS, FLEET_LABELS, FLEET_OBJECT, fleetObjectName, type ShardClusterRecap, type ShardReport } from './contract.js';
import { shardOf } from './partition.js';

type Data = Record<string, string>;

/** Where the coordination object is. */
export interface FleetRef {
  fleetRun: string;
  namespace: string;
}

/** The coordination object's reference. */
export function fleetObjectRef(ref: FleetRef): { apiVersion: string; kind: string; name: string; namespace: string } {
  return { apiVersion: FLEET_OBJECT.apiVersion, kind: FLEET_OBJECT.kind, name: fleetObjectName(ref.fleetRun), namespace: ref.namespace };
}

/** Read the coordination object's data (undefined: no such fleet run). */
export async function readFleet(client: KubeClient, ref: FleetRef, signal?: AbortSignal): Promise<Data | undefined> {
  const live = await client.get(fleetObjectRef(ref), signal);
  return live ? dataOf(live) : undefined;
}

function dataOf(obj: KubeObject): Data {
  const d = (obj as { data?: unknown }).data;
  const out: Data = {};
  if (d && typeof d === 'object') for (const [k, v] of Object.entries(d)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** How a stop set by the fleet reads in this shard's output. */
export function describeStop(stop: FleetStop, me: number): string {
  const by = stop.shard === me ? 'this shard' : `shard ${stop.shard}`;
  return `fleet stopped: ${stop.reason} (${by}, play ${stop.play + 1}, batch ${stop.batch})`;
}

/** Options of a shard's coordinator. */
export interface CoordinatorOptions extends FleetRef {
  index: number;
  shards: number;
  /** Between reads while waiting for the other shards to finish a batch. @default 500 */
  pollMs?: number;
  /** Said once per batch the shard waits for. */
  onWait?: (msg: string) => void;
}

/** A shard's coordinator: the executor's {@link FleetHooks} against the management cluster. */
export class FleetCoordinator implements FleetHooks {
  private constructor(
    private readonly client: KubeClient,
    private readonly o: CoordinatorOptions,
  ) {}

  /** Open (create when missing) the fleet run's object; a fleet run started with another number of shards is refused. */
  static async open(client: KubeClient, o: CoordinatorOptions, signal?: AbortSignal): Promise<FleetCoordinator> {
    const c = new FleetCoordinator(client, o);
    const data = await c.update((d) => (d[FLEET_KEYS.shards] ? undefined : { ...d, [FLEET_KEYS.shards]: String(o.shards) }), signal);
    const n = Number(data[FLEET_KEYS.shards]);
    if (n !== o.shards) {
      throw new InputError(`fleet run ${o.fleetRun} has ${data[FLEET_KEYS.shards]} shards (ConfigMap ${o.namespace}/${fleetObjectName(o.fleetRun)}), this shard was started as one of ${o.shards}`, undefined, 'start every shard of a fleet run with the same N, or use a new --fleet-run id');
    }
    return c;
  }

  owns(cluster: string): boolean {
    return shardOf(cluster, this.o.shards) === this.o.index;
  }

  /** Read, change and write the object (created when missing), retrying on conflicts; returns the data now stored. */
  async update(mutate: (data: Data) => Data | undefined, signal?: AbortSignal): Promise<Data> {
    const ref = fleetObjectRef(this.o);
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const live = await this.client.get(ref, signal);
      const before = live ? dataOf(live) : {};
      const after = mutate(before);
      if (live && !after) return before;
      const obj: KubeObject = {
        apiVersion: FLEET_OBJECT.apiVersion,
        kind: FLEET_OBJECT.kind,
        metadata: {
          ...(live?.metadata ?? {}),
          name: ref.name,
          namespace: ref.namespace,
          labels: { ...(live?.metadata.labels ?? {}), [FLEET_LABELS.managedBy]: 'kplay', [FLEET_LABELS.run]: this.o.fleetRun },
        },
        data: after ?? before,
      } as KubeObject;
      try {
        if (live) await this.client.replace(obj, { signal });
        else await this.client.create(obj, { signal });
        return after ?? before;
      } catch (e) {
        // another shard wrote (or created it) between our read and write: read again
        if (e instanceof KubeApiError && e.status === 409 && attempt < 100) continue;
        if (e instanceof KubeApiError && e.status === 404 && !live) {
          throw new InputError(`namespace ${this.o.namespace} of the fleet run does not exist in the management cluster`, undefined, 'create it (kplay fleet job writes it with the Job), or give --fleet-namespace');
        }
        throw e;
      }
    }
  }

  private stopReason(data: Data): string | undefined {
    const s = stopOf(data);
    return s ? describeStop(s, this.o.index) : undefined;
  }

  async beforeBatch(b: FleetBatch, signal: AbortSignal): Promise<string | undefined> {
    let said = false;
    for (;;) {
      const data = (await readFleet(this.client, this.o, signal)) ?? {};
      const stop = stopOf(data);
      if (stop && stopsBatch(stop, b.play, b.batch)) return describeStop(stop, this.o.index);
      if (b.batch === 1) return undefined;
      const done = doneIn(data, b.play, b.batch - 1);
      if (done.length >= this.o.shards) return undefined;
      if (!said) {
        said = true;
        const missing = [...Array(this.o.shards).keys()].filter((i) => !done.includes(i));
        this.o.onWait?.(`waiting for shard(s) ${missing.join(', ')} to finish batch ${b.batch - 1} of play ${b.play + 1} before starting batch ${b.batch}`);
      }
      await sleep(this.o.pollMs ?? 500, undefined, { signal });
    }
  }

  async checkpoint(b: FleetBatch, failed: string[], signal: AbortSignal): Promise<string | undefined> {
    const data = await this.update((d) => reportFailures(d, this.o.index, b.play, b.batch, failed, ruleOf(b)), signal);
    return this.stopReason(data);
  }

  async afterBatch(b: FleetBatch, failed: string[], recap: Record<string, ShardClusterRecap>, signal: AbortSignal): Promise<string | undefined> {
    const data = await this.update((d) => {
      const reported = reportFailures(d, this.o.index, b.play, b.batch, failed, ruleOf(b)) ?? d;
      const done = markDone(reported, this.o.index, b.play, b.batch) ?? reported;
      const withRecap = Object.keys(recap).length ? mergeRecap(done, this.o.index, recap) : done;
      return withRecap === d ? undefined : withRecap;
    }, signal);
    return this.stopReason(data);
  }

  /** Write this shard's report (a resumed shard's recap is merged over its earlier one). */
  async report(r: ShardReport, signal?: AbortSignal): Promise<void> {
    await this.update((d) => {
      const prev = reportsOf(d).get(this.o.index);
      const recap = { ...(prev?.recap ?? {}), ...r.recap };
      return { ...d, [FLEET_KEYS.shard(this.o.index)]: JSON.stringify({ ...r, recap } satisfies ShardReport) };
    }, signal);
  }
}

/** `data` with the recap of clusters that finished a batch merged into shard `index`'s report (a killed shard's finished batches stay counted). */
function mergeRecap(data: Data, index: number, recap: Record<string, ShardClusterRecap>): Data {
  const prev = reportsOf(data).get(index);
  if (!prev) return data;
  return { ...data, [FLEET_KEYS.shard(index)]: JSON.stringify({ ...prev, recap: { ...prev.recap, ...recap } } satisfies ShardReport) };
}

function ruleOf(b: FleetBatch): BatchRule {
  return { batchSize: b.size, anyErrorsFatal: b.anyErrorsFatal, ...(b.maxFailPercentage !== undefined ? { maxFailPercentage: b.maxFailPercentage } : {}) };
}
