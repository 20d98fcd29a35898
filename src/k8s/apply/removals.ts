/**
 * Hand-edit removal: taking out the fields other managers added to an object (drift, e.g. a
 * `kubectl edit`), with one JSON patch guarded by the object's resourceVersion.
 */
import { KubeApiError } from '../errors.js';
import { pointerOf, sortForRemoval, type FieldAddition } from '../fields.js';
import { labelOf } from '../object-plan.js';
import type { KubeClient, KubeObject, ObjectRef } from '../types.js';

/**
 * Remove fields other managers added (drift) from an object with one JSON patch, guarded by the
 * resourceVersion it was computed against; when the object moved meanwhile, computed again once.
 * `current`: the object as the server just returned it (an apply's answer), saving the first read.
 */
export async function removeAdditions(client: KubeClient, ref: ObjectRef, additions: FieldAddition[], opts: { signal?: AbortSignal; current?: KubeObject } = {}): Promise<KubeObject> {
  for (let attempt = 1; ; attempt++) {
    const live = attempt === 1 && opts.current ? opts.current : await client.get(ref, opts.signal);
    if (!live) throw new Error(`${labelOf(ref)} was deleted while its drift was being repaired`);
    const ptrs = sortForRemoval(additions.map((a) => pointerOf(live, a.segments)).filter((p): p is string => p !== undefined));
    if (ptrs.length === 0) return live;
    try {
      return await client.jsonPatch(ref, [{ op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion }, ...ptrs.map((path) => ({ op: 'remove' as const, path }))], { signal: opts.signal });
    } catch (e) {
      // The object moved on between the read and the patch (a controller writing its status
      // changes resourceVersion too): read it again, as client-go's RetryOnConflict does (5 tries).
      const moved = e instanceof KubeApiError && (e.status === 409 || e.status === 422);
      if (!moved || attempt >= REMOVE_ATTEMPTS) throw e;
      await new Promise((r) => setTimeout(r, 10 * attempt));
    }
  }
}

/** Tries of {@link removeAdditions} when the object keeps changing under it. */
export const REMOVE_ATTEMPTS = 5;
