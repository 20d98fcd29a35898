/** The `kplay-system` namespace that holds locks and run records in each cluster. */
import type { KubeClient } from '../k8s/types.js';
import { KubeApiError } from '../k8s/errors.js';

export const SYSTEM_NAMESPACE = 'kplay-system';

const ensured = new WeakSet<KubeClient>();

/** Create `kplay-system` if it does not exist (once per client). */
export async function ensureSystemNamespace(client: KubeClient, signal?: AbortSignal): Promise<void> {
  if (ensured.has(client)) return;
  const ref = { apiVersion: 'v1', kind: 'Namespace', name: SYSTEM_NAMESPACE };
  if (!(await client.get(ref, signal))) await createSystemNamespace(client, signal);
  ensured.add(client);
}

/** Create `kplay-system`, known to be missing (one made meanwhile by another run is fine). */
export async function createSystemNamespace(client: KubeClient, signal?: AbortSignal): Promise<void> {
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM_NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'kplay' } } }, { signal });
  } catch (e) {
    if (!(e instanceof KubeApiError && e.status === 409)) throw e;
  }
  ensured.add(client);
}
