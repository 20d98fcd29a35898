/**
 * Reading run records back: local record files (`<record dir>/<run id>.jsonl`) and the record
 * ConfigMaps in a cluster's `kplay-system`, as `kplay history`, `kplay report` and the chain
 * check take them. Writing is `record.ts`.
 */
import { open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { isRecord } from '../core/shape.js';
import type { LocalRecord, RunRecord } from '../report/records.js';
import { sha256, type ChainEntry, type ChainLink } from './chain.js';
import { SYSTEM_NAMESPACE } from './system.js';

/** The label every run record ConfigMap carries (`kplay.dev/record=run`). */
export const RECORD_LABEL = 'kplay.dev/record';
/** The label holding a record's run id. */
export const RUN_ID_LABEL = 'kplay.dev/run-id';

/** A link as stored, or undefined when it is not one. */
export function asLink(v: unknown): ChainLink | null | undefined {
  if (v === null) return null;
  return isRecord(v) && typeof v.run_id === 'string' && typeof v.sha256 === 'string' ? { run_id: v.run_id, sha256: v.sha256 } : undefined;
}

/** Parse one local record file (undefined when it is not a record at all). */
export function parseLocalRecord(file: string, text: string): LocalRecord | undefined {
  const lines: Record<string, unknown>[] = [];
  for (const l of text.split('\n')) {
    if (!l.trim()) continue;
    try {
      const v: unknown = JSON.parse(l);
      if (isRecord(v)) lines.push(v);
    } catch {
      // an edited, broken line: the digest check reports it
    }
  }
  const run = lines.find((l) => l.type === 'run');
  if (!run || typeof run.run_id !== 'string') return undefined;
  const recap = lines.find((l) => l.type === 'recap');
  const digest = lines.find((l) => l.type === 'digest');
  const body = text.slice(0, text.lastIndexOf('{"type":"digest"'));
  let chain: Record<string, ChainLink | null> | undefined;
  if (isRecord(run.chain)) {
    chain = {};
    for (const [c, v] of Object.entries(run.chain)) {
      const link = asLink(v);
      if (link !== undefined) chain[c] = link;
    }
  }
  const clusters = chain ? Object.keys(chain) : isRecord(recap?.clusters) ? Object.keys(recap.clusters) : [];
  return { run_id: run.run_id, file, text, run, clusters, chain, digestOk: digest !== undefined && typeof digest.sha256 === 'string' && digest.sha256 === sha256(body), lines };
}

/** The first line of a file (read in chunks, so a large record is not read whole). */
export async function firstLine(file: string): Promise<string> {
  const fh = await open(file, 'r');
  try {
    let text = '';
    const buf = Buffer.alloc(64 * 1024);
    for (let pos = 0; ; ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return text;
      text += buf.subarray(0, bytesRead).toString('utf8');
      const nl = text.indexOf('\n');
      if (nl >= 0) return text.slice(0, nl);
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
}

/** Every local record of a directory, oldest first (unreadable files are skipped). */
export async function readLocalRecords(dir: string): Promise<LocalRecord[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const out: LocalRecord[] = [];
  for (const n of names.sort()) {
    const file = path.join(dir, n);
    const rec = parseLocalRecord(file, await readFile(file, 'utf8').catch(() => ''));
    if (rec) out.push(rec);
  }
  return out.sort((a, b) => a.run_id.localeCompare(b.run_id));
}

/** The run id and link inside an in-cluster record's text (undefined when unreadable). */
export function recordHead(text: string): { run_id: string; prev: ChainLink | null | undefined } | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) && isRecord(v.run) && typeof v.run.run_id === 'string' ? { run_id: v.run.run_id, prev: 'prev' in v ? asLink(v.prev) : undefined } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The run record ConfigMaps of a cluster and the head of their chain (`cluster-head.ts`; none
 * when `kplay-system` does not exist). A run holding the cluster's lock reads them when it first
 * changes the cluster, so that the end of the run costs two writes (the head's swap, the record)
 * and no read; the swap fails and is retried when another run wrote a record meanwhile.
 */
export async function listRecords(client: KubeClient, signal?: AbortSignal): Promise<KubeObject[]> {
  return (await client.list('v1', 'ConfigMap', { namespace: SYSTEM_NAMESPACE, labelSelector: `${RECORD_LABEL} in (run,head)`, signal })).items;
}

/** Records stored in a cluster, newest first. */
export async function listClusterRecords(client: KubeClient): Promise<RunRecord[]> {
  return (await listClusterRecordEntries(client)).flatMap((e) => (e.record ? [e.record] : []));
}

/** An in-cluster record with what the chain check needs. */
export interface ClusterRecordEntry {
  /** ConfigMap name. */
  name: string;
  run_id: string;
  text: string;
  /** The parsed record (undefined when the text is no longer valid JSON). */
  record: RunRecord | undefined;
  /** The `record.sha256` key, if any. */
  digest: string | undefined;
}

/** Every record ConfigMap of a cluster, newest first (damaged ones included, for verification). */
export async function listClusterRecordEntries(client: KubeClient): Promise<ClusterRecordEntry[]> {
  const { items } = await client.list('v1', 'ConfigMap', { namespace: SYSTEM_NAMESPACE, labelSelector: `${RECORD_LABEL}=run` });
  const out: ClusterRecordEntry[] = [];
  for (const cm of items) {
    const data = isRecord(cm.data) ? cm.data : {};
    const text = typeof data['record.json'] === 'string' ? data['record.json'] : undefined;
    if (text === undefined) continue;
    let record: RunRecord | undefined;
    try {
      const v: unknown = JSON.parse(text);
      if (isRecord(v) && isRecord(v.run) && typeof v.run.run_id === 'string') record = v as unknown as RunRecord;
    } catch {
      // a damaged record: reported by verification, skipped by listings
    }
    const run_id = record?.run.run_id ?? cm.metadata.labels?.[RUN_ID_LABEL] ?? String(cm.metadata.name);
    out.push({ name: String(cm.metadata.name), run_id, text, record, digest: typeof data['record.sha256'] === 'string' ? data['record.sha256'] : undefined });
  }
  return out.sort((a, b) => b.run_id.localeCompare(a.run_id));
}

/** One cluster's local records as the chain check takes them (`kplay history verify`, `kplay report`). */
export function localChainEntries(local: readonly LocalRecord[], cluster: string): ChainEntry[] {
  return local
    .filter((r) => r.clusters.includes(cluster))
    .map((r) => ({ run_id: r.run_id, where: path.relative(process.cwd(), r.file) || r.file, sha256: sha256(r.text), digestOk: r.digestOk, prev: r.chain ? (r.chain[cluster] ?? null) : undefined }));
}

/** A cluster's record ConfigMaps as the chain check takes them. */
export function clusterChainEntries(entries: readonly ClusterRecordEntry[], cluster: string): ChainEntry[] {
  return entries.map((e) => ({
    run_id: e.run_id,
    where: `ConfigMap kplay-system/${e.name} in ${cluster}`,
    sha256: sha256(e.text),
    digestOk: e.digest !== undefined && e.digest === sha256(e.text) && e.record !== undefined,
    prev: e.record ? e.record.prev : null,
  }));
}
