/**
 * Pruning: deleting the objects a task applied with `prune: true` before but no longer has. The
 * objects carry an owner label; a ConfigMap records which kinds and namespaces to look in.
 */
import { sortForDelete } from '../order.js';
import type { KubeClient, KubeObject, ObjectRef } from '../types.js';
import { isRecord } from '../../core/shape.js';
import { deleteOne } from './delete.js';
import { isUnknownKind, type ObjectResult } from './types.js';

/** Label put on objects applied with `prune: true`. */
export const OWNER_LABEL = 'kplay.dev/owner';
/** Label of the ConfigMap that records which kinds/namespaces a pruning task applied. */
export const RECORD_LABEL = 'kplay.dev/prune-record';

/** One recorded kind with the namespaces it was applied in (empty for cluster-scoped kinds). */
export interface PruneRecordEntry {
  apiVersion: string;
  kind: string;
  namespaces: string[];
}

/** The record of kinds and namespaces of the objects of `objects` (sorted, canonical). */
export function pruneRecordOf(objects: KubeObject[]): PruneRecordEntry[] {
  const m = new Map<string, PruneRecordEntry>();
  for (const o of objects) {
    const key = `${o.apiVersion}|${o.kind}`;
    const e = m.get(key) ?? { apiVersion: o.apiVersion, kind: o.kind, namespaces: [] };
    const ns = o.metadata.namespace;
    if (ns && !e.namespaces.includes(ns)) e.namespaces.push(ns);
    m.set(key, e);
  }
  return [...m.values()].map((e) => ({ ...e, namespaces: e.namespaces.sort() })).sort((a, b) => `${a.apiVersion}|${a.kind}`.localeCompare(`${b.apiVersion}|${b.kind}`));
}

/** Merge two records (union of kinds and namespaces). */
export function mergeRecords(a: PruneRecordEntry[], b: PruneRecordEntry[]): PruneRecordEntry[] {
  const objs: KubeObject[] = [];
  for (const e of [...a, ...b]) {
    if (e.namespaces.length === 0) objs.push({ apiVersion: e.apiVersion, kind: e.kind, metadata: {} });
    for (const ns of e.namespaces) objs.push({ apiVersion: e.apiVersion, kind: e.kind, metadata: { namespace: ns } });
  }
  return pruneRecordOf(objs);
}

/** Options of {@link pruneObjects}. */
export interface PruneOptions {
  /** Owner id (value of the `kplay.dev/owner` label). */
  id: string;
  /** Namespace of the record ConfigMap `kplay-prune-<id>`. */
  recordNamespace: string;
  fieldManager: string;
  checkMode: boolean;
  signal?: AbortSignal;
  mask?: (s: string) => string;
  log?: (msg: string) => void;
  /** Called with each object deleted, once its delete is answered (see `ApplySetOptions.onWritten`). */
  onWritten?: (r: ObjectResult) => void;
}

/**
 * Delete objects labelled `kplay.dev/owner=<id>` that are not in `applied` (namespace-resolved
 * objects of this run). Looks in the kinds/namespaces of this run plus those recorded by
 * earlier runs (ConfigMap `kplay-prune-<id>`), then updates the record (only when it changed).
 * Objects without the owner label are never touched.
 */
export async function pruneObjects(client: KubeClient, applied: KubeObject[], opts: PruneOptions): Promise<ObjectResult[]> {
  const recordRef: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: `kplay-prune-${opts.id}`, namespace: opts.recordNamespace };
  const recordObj = await client.get(recordRef, opts.signal);
  let previous: PruneRecordEntry[] = [];
  const raw = isRecord(recordObj?.data) ? recordObj.data.resources : undefined;
  if (typeof raw === 'string') {
    try {
      const v: unknown = JSON.parse(raw);
      if (Array.isArray(v)) previous = v.filter((e): e is PruneRecordEntry => isRecord(e) && typeof e.apiVersion === 'string' && typeof e.kind === 'string' && Array.isArray(e.namespaces));
    } catch {
      // a corrupt record is rebuilt
    }
  }
  const current = pruneRecordOf(applied);
  const keys = new Set(applied.map((o) => `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name ?? ''}`));
  const selector = `${OWNER_LABEL}=${opts.id}`;
  const candidates: KubeObject[] = [];
  for (const e of mergeRecords(previous, current)) {
    let info;
    try {
      info = await client.resource(e.apiVersion, e.kind);
    } catch (err) {
      if (isUnknownKind(err)) continue;
      throw err;
    }
    const scopes = info.namespaced ? e.namespaces : [undefined];
    for (const ns of scopes) {
      const { items } = await client.list(e.apiVersion, e.kind, { namespace: ns, labelSelector: selector, signal: opts.signal });
      for (const o of items) {
        if (o.metadata.labels?.[OWNER_LABEL] !== opts.id || o.metadata.deletionTimestamp) continue;
        if (!keys.has(`${e.apiVersion}|${e.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name ?? ''}`)) candidates.push({ ...o, apiVersion: e.apiVersion, kind: e.kind });
      }
    }
  }
  const results: ObjectResult[] = [];
  for (const o of sortForDelete(candidates)) results.push(await deleteOne(client, o, opts));
  if (!opts.checkMode && JSON.stringify(previous) !== JSON.stringify(current)) {
    await client.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: recordRef.name, namespace: opts.recordNamespace, labels: { [RECORD_LABEL]: opts.id } }, data: { resources: JSON.stringify(current) } },
      { fieldManager: opts.fieldManager, force: true, signal: opts.signal },
    );
  }
  return results;
}
