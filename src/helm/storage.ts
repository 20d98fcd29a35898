/**
 * Helm's release records read through the Kubernetes API, without running helm. Helm (3 and 4)
 * stores each revision as a Secret (default driver) or ConfigMap named
 * `sh.helm.release.v1.<name>.v<revision>`, labelled `owner=helm,name=<name>,version=<revision>`;
 * its `release` field is base64(gzip(JSON of the release)), and a Secret base64-encodes that once
 * more. The JSON holds the status, the chart (metadata, templates, values, files, schema), the
 * user-supplied values (`config`), the rendered manifest and the hooks.
 *
 * kplay only reads these records; helm stays the only writer of releases.
 */
import { gunzipSync } from 'node:zlib';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { parseReleaseInfo, type ReleaseInfo } from './release.js';
import { isMap, type Values } from './values.js';

/** A chart file as helm stores it (`templates`, `files`). */
export interface StoredFile {
  name: string;
  /** File content, base64. */
  data: string;
}

/** The chart of a stored release. */
export interface StoredChart {
  name: string;
  version: string;
  appVersion: string;
  templates: StoredFile[];
  files: StoredFile[];
  /** The chart's default values (`values.yaml`). */
  values: Values;
  /** `values.schema.json`, base64, when the chart has one. */
  schema?: string;
}

/** A release revision read from its storage record. */
export interface StoredRelease extends ReleaseInfo {
  storedChart: StoredChart;
}

/** The storage drivers kplay can read (helm's `HELM_DRIVER`); others (sql, memory) need helm itself. */
export type StorageKind = 'Secret' | 'ConfigMap';

/** The storage kind for a `HELM_DRIVER` value (`''`/`secret`/`secrets` → Secret), `undefined` for drivers kplay cannot read. */
export function storageKind(driver: string | undefined): StorageKind | undefined {
  const d = (driver ?? '').trim().toLowerCase();
  if (d === '' || d === 'secret' || d === 'secrets') return 'Secret';
  if (d === 'configmap' || d === 'configmaps') return 'ConfigMap';
  return undefined;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function files(v: unknown): StoredFile[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isMap).map((f) => ({ name: str(f.name), data: str(f.data) }));
}

/** Decode helm's encoding of a release (base64 of gzipped or plain JSON). */
export function decodeRelease(encoded: string): unknown {
  const raw = Buffer.from(encoded, 'base64');
  const json = raw.length > 2 && raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  return JSON.parse(json) as unknown;
}

/**
 * The chart part of a release as helm serialises it (a storage record, or `-o json` of `helm
 * install`/`upgrade`): metadata, templates, files, default values, schema.
 */
export function parseStoredChart(chart: unknown): StoredChart {
  const c = isMap(chart) ? chart : {};
  const meta = isMap(c.metadata) ? c.metadata : {};
  return {
    name: str(meta.name),
    version: str(meta.version),
    appVersion: str(meta.appVersion),
    templates: files(c.templates),
    files: files(c.files),
    values: isMap(c.values) ? c.values : {},
    ...(typeof c.schema === 'string' && c.schema ? { schema: c.schema } : {}),
  };
}

/** The release of one storage record (Secret or ConfigMap). */
export function parseRecord(record: KubeObject): StoredRelease {
  const data = isMap(record.data) ? record.data : {};
  const field = str(data.release);
  if (!field) throw new Error(`helm release record ${record.metadata.name ?? ''} has no release data`);
  const encoded = record.kind === 'Secret' ? Buffer.from(field, 'base64').toString('utf8') : field;
  const v = decodeRelease(encoded);
  const info = parseReleaseInfo(v);
  return { ...info, storedChart: parseStoredChart(isMap(v) ? v.chart : undefined) };
}

/** Revision number of a storage record (its `version` label, else the name's `.vN` suffix). */
export function recordRevision(o: KubeObject): number {
  const label = o.metadata.labels?.version;
  if (label && /^\d+$/.test(label)) return Number(label);
  const m = /\.v(\d+)$/.exec(o.metadata.name ?? '');
  return m?.[1] ? Number(m[1]) : 0;
}

/**
 * The newest revision of release `name` in `namespace` (one LIST of the release's records), or
 * `undefined` when it is not installed. Uninstalled releases kept with `--keep-history` count as
 * not installed, as for `helm upgrade --install`.
 */
export async function readStoredRelease(client: KubeClient, kind: StorageKind, name: string, namespace: string, signal?: AbortSignal): Promise<StoredRelease | undefined> {
  const { items } = await client.list('v1', kind, { namespace, labelSelector: `owner=helm,name=${name}`, signal });
  const records = items.filter((o) => o.metadata.name?.startsWith(`sh.helm.release.v1.${name}.v`));
  if (!records.length) return undefined;
  const newest = records.reduce((a, b) => (recordRevision(b) > recordRevision(a) ? b : a));
  const release = parseRecord(newest);
  return release.status === 'uninstalled' ? undefined : release;
}

/**
 * Every stored revision of release `name` in `namespace` (one LIST), oldest first; `[]` when the
 * release has no records. Revisions pruned by helm's `--history-max` are not there.
 */
export async function readStoredHistory(client: KubeClient, kind: StorageKind, name: string, namespace: string, signal?: AbortSignal): Promise<StoredRelease[]> {
  const { items } = await client.list('v1', kind, { namespace, labelSelector: `owner=helm,name=${name}`, signal });
  return items
    .filter((o) => o.metadata.name?.startsWith(`sh.helm.release.v1.${name}.v`))
    .sort((a, b) => recordRevision(a) - recordRevision(b))
    .map(parseRecord);
}
