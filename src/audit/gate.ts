/**
 * Approval gates: a run waiting at gate NAME on a cluster holds a ConfigMap
 * `kplay-system/kplay-gate-<run id>-<gate>` (state `pending`); `kplay approve RUN_ID --gate NAME
 * -i INV` (another terminal, a CI job) sets it to `approved` (or `rejected`) with who and when. The
 * waiting task watches it, so it waits without using CPU.
 */
import type { KubeClient, KubeObject, ObjectRef } from '../k8s/types.js';
import { labelValue } from './record.js';
import { ensureSystemNamespace, SYSTEM_NAMESPACE } from './system.js';

export const GATE_LABEL = 'kplay.dev/gate';
export const GATE_RUN_LABEL = 'kplay.dev/gate-run';

/** A gate's state as stored. */
export interface GateState {
  state: 'pending' | 'approved' | 'rejected';
  by?: string;
  at?: string;
  comment?: string;
}

/** Gate names: lower-case letters, digits and `-` (they go into object names). */
export const GATE_NAME = /^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/;

/** The ConfigMap of a gate of a run. */
export function gateRef(runId: string, gate: string): ObjectRef {
  return { apiVersion: 'v1', kind: 'ConfigMap', namespace: SYSTEM_NAMESPACE, name: `kplay-gate-${runId.toLowerCase()}-${gate}`.slice(0, 253) };
}

/** The state stored in a gate ConfigMap. */
export function gateState(cm: KubeObject | undefined): GateState | undefined {
  const d = cm?.data;
  if (typeof d !== 'object' || d === null) return undefined;
  const data = d as Record<string, unknown>;
  const state = data.state;
  if (state !== 'pending' && state !== 'approved' && state !== 'rejected') return undefined;
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  return { state, by: str(data.by), at: str(data.at), comment: str(data.comment) };
}

/** Open a gate (pending) for a run on a cluster; an existing one (a retried task) is kept. */
export async function openGate(client: KubeClient, runId: string, gate: string, info: { cluster: string; message?: string }, signal?: AbortSignal): Promise<void> {
  await ensureSystemNamespace(client, signal);
  const ref = gateRef(runId, gate);
  if (await client.get(ref, signal)) return;
  await client.create(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: ref.name, namespace: SYSTEM_NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'kplay', [GATE_LABEL]: gate, [GATE_RUN_LABEL]: labelValue(runId) } },
      data: { state: 'pending', run_id: runId, gate, cluster: info.cluster, since: new Date().toISOString(), ...(info.message ? { message: info.message } : {}) },
    },
    { signal },
  );
}

/** Approve or reject the pending gate of a run on a cluster; false when that run is not waiting there. */
export async function decideGate(client: KubeClient, runId: string, gate: string, decision: { state: 'approved' | 'rejected'; by: string; comment?: string }): Promise<boolean> {
  const ref = gateRef(runId, gate);
  const cm = await client.get(ref);
  if (!gateState(cm)) return false;
  await client.mergePatch(ref, { data: { state: decision.state, by: decision.by, at: new Date().toISOString(), ...(decision.comment ? { comment: decision.comment } : {}) } });
  return true;
}
