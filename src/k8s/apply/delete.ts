/**
 * Deleting objects: a set in reverse apply order (`state: absent`), or one object (also what
 * pruning deletes). Idempotent: an absent object, or one already being deleted, is `unchanged`.
 */
import pLimit from 'p-limit';
import { diffEntry, maskObject, normalize } from '../normalize.js';
import { phases, sortForDelete } from '../order.js';
import { labelOf, objectRef, resolveNamespace } from '../object-plan.js';
import type { KubeClient, KubeObject, ObjectPlan } from '../types.js';
import { allSettledOrThrow, isUnknownKind, type ApplySetOptions, type ObjectResult } from './types.js';

/** Delete `objects` in reverse apply order (idempotent: absent objects are `unchanged`). */
export async function deleteObjects(client: KubeClient, objects: KubeObject[], opts: Omit<ApplySetOptions, 'fieldManager' | 'force'>): Promise<ObjectResult[]> {
  const results: ObjectResult[] = [];
  const limit = pLimit(16);
  const ordered = sortForDelete(objects);
  // phases in reverse order
  const groups = phases(ordered.map((obj) => ({ obj }))).reverse();
  for (const g of groups) {
    const done = await allSettledOrThrow(
      g.items.map(({ obj }) =>
        limit(async (): Promise<ObjectResult> => {
          let resolved: KubeObject;
          try {
            resolved = await resolveNamespace(client, obj, opts.defaultNamespace);
          } catch (e) {
            if (!isUnknownKind(e)) throw e;
            // The kind does not exist (CRD gone): the object cannot exist either.
            const ref = objectRef(obj);
            return { ref, action: 'unchanged', plan: { ref, action: 'unchanged', diff: diffEntry(labelOf(ref), undefined, undefined), changedPaths: [] } };
          }
          return deleteOne(client, resolved, opts);
        }),
      ),
    );
    results.push(...done);
  }
  return results;
}

/** Delete one (namespace-resolved) object. */
export async function deleteOne(client: KubeClient, obj: KubeObject, opts: Pick<ApplySetOptions, 'checkMode' | 'signal' | 'mask' | 'log' | 'onWritten'>): Promise<ObjectResult> {
  const ref = objectRef(obj);
  const live = await client.get(ref, opts.signal);
  if (!live || live.metadata.deletionTimestamp) {
    return { ref, action: 'unchanged', plan: { ref, action: 'unchanged', diff: diffEntry(labelOf(ref), undefined, undefined), changedPaths: [] } };
  }
  const masked = maskObject(normalize(live));
  const plan: ObjectPlan = { ref, action: 'delete', live: masked, diff: diffEntry(labelOf(ref), masked, undefined, opts.mask), changedPaths: [] };
  if (!opts.checkMode) {
    const existed = await client.delete(ref, { signal: opts.signal, propagationPolicy: 'Background' });
    if (!existed) return { ref, action: 'unchanged', plan: { ...plan, action: 'unchanged' } };
    if (ref.kind === 'CustomResourceDefinition') client.learnKinds(ref.name, []);
    opts.log?.(`deleted ${labelOf(ref)}`);
  }
  const r: ObjectResult = { ref, action: 'deleted', plan, object: masked };
  if (!opts.checkMode) opts.onWritten?.(r);
  return r;
}
