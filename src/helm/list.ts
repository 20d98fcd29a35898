/**
 * A release as `helm list` shows it (the entry kubernetes.core's `helm` and `helm_info` register
 * as `status`), read from helm's storage records through the Kubernetes API — or from `helm list`
 * itself for storage drivers kplay cannot read (`sql`, `memory`).
 */
import type { KubeClient, KubeObject } from '../k8s/types.js';
import type { HelmCli } from './cli.js';
import { parseHelmJson } from './release.js';
import { recordRevision, decodeRelease, type StorageKind } from './storage.js';
import { isMap, type Values } from './values.js';

/** The state filters of `helm list` (and of `helm_info`'s `release_state`). */
export const LIST_STATES = ['all', 'deployed', 'failed', 'pending', 'superseded', 'uninstalled', 'uninstalling'] as const;

/** One state filter of `helm list`. */
export type ListState = (typeof LIST_STATES)[number];

/** A row of `helm list -o json|yaml`. */
export interface ListEntry {
  name: string;
  namespace: string;
  /** The revision, a string as `helm list` prints it. */
  revision: string;
  /** When the revision was deployed, as Go prints a time (`2026-11-26 12:00:00.123456789 +0000 UTC`). */
  updated: string;
  status: string;
  /** `<chart name>-<chart version>` */
  chart: string;
  app_version: string;
}

/** A listed release with what `helm get` would add (user values, manifest, notes, hooks, chart defaults). */
export interface ListedRelease {
  entry: ListEntry;
  /** User-supplied values (`helm get values`), `{}` when none. */
  config: Values;
  /** The chart's default values (for `helm get values --all`, coalesced with `config` by helm). */
  chartValues: Values;
  /** Rendered manifest (`helm get manifest`). */
  manifest: string;
  /** `helm get notes` text, `''` when the chart has none. */
  notes: string;
  /** Hooks (`helm get hooks`): `# Source: path` + manifest. */
  hooks: { path: string; manifest: string }[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const obj = (v: unknown): Values => (isMap(v) ? v : {});

/**
 * A time as Go's `time.Time.String()` prints it, which `helm list` uses: `2006-01-02
 * 15:04:05.999999999 -0700 MST` (fraction without trailing zeros, `UTC` for `Z`, the numeric
 * offset twice for other zones, as Go prints a zone without a name). `-` for an empty time.
 * @example goTimeString('2026-11-26T12:00:01.5Z') // '2026-11-26 12:00:01.5 +0000 UTC'
 */
export function goTimeString(rfc3339: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(rfc3339.trim());
  if (!m) return rfc3339 ? rfc3339 : '-';
  const [, date, clock, fraction, zone] = m;
  const frac = (fraction ?? '').replace(/0+$/, '');
  const offset = zone === 'Z' ? '+0000' : (zone ?? '').replace(':', '');
  return `${date} ${clock}${frac ? `.${frac}` : ''} ${offset} ${zone === 'Z' ? 'UTC' : offset}`;
}

/** Whether a release status passes `helm list`'s state filters (none given: deployed and failed, as helm). */
export function statusMatches(status: string, states: readonly ListState[]): boolean {
  if (states.includes('all')) return true;
  const wanted = states.length ? states : (['deployed', 'failed'] as const);
  return wanted.some((s) => (s === 'pending' ? status.startsWith('pending-') : s === status));
}

/** The `helm list` row and details of a decoded release (storage record or `-o json`). */
export function listedRelease(v: unknown): ListedRelease {
  const r = obj(v);
  const info = obj(r.info);
  const chart = obj(r.chart);
  const meta = obj(chart.metadata);
  const hooks = Array.isArray(r.hooks) ? r.hooks.filter(isMap).map((h) => ({ path: str(h.path), manifest: str(h.manifest) })) : [];
  return {
    entry: {
      name: str(r.name),
      namespace: str(r.namespace),
      revision: str(r.version),
      updated: goTimeString(str(info.last_deployed)),
      status: str(info.status) || 'unknown',
      chart: `${str(meta.name)}-${str(meta.version)}`,
      app_version: str(meta.appVersion),
    },
    config: obj(r.config),
    chartValues: obj(chart.values),
    manifest: str(r.manifest),
    notes: str(info.notes),
    hooks,
  };
}

/**
 * Release `name` in `namespace` as `helm list --filter NAME [state flags]` finds it: its newest
 * revision, when that revision's status passes `states` (only `superseded` asked: the newest
 * superseded revision, as helm skips its newest-only rule then). Values, manifest, notes and hooks
 * are the newest revision's, as `helm get …` without `--revision` (what kubernetes.core runs)
 * gives them. One LIST of the records.
 */
export async function listStoredRelease(client: KubeClient, kind: StorageKind, name: string, namespace: string, states: readonly ListState[], signal?: AbortSignal): Promise<ListedRelease | undefined> {
  const { items } = await client.list('v1', kind, { namespace, labelSelector: `owner=helm,name=${name}`, signal });
  const all: KubeObject[] = items.filter((o) => o.metadata.name?.startsWith(`sh.helm.release.v1.${name}.v`));
  const onlySuperseded = states.length > 0 && states.every((s) => s === 'superseded');
  const records = onlySuperseded ? all.filter((o) => o.metadata.labels?.status === 'superseded') : all;
  const newestOf = (list: KubeObject[]): KubeObject | undefined => (list.length ? list.reduce((a, b) => (recordRevision(b) > recordRevision(a) ? b : a)) : undefined);
  const newest = newestOf(records);
  if (!newest) return undefined;
  const decode = (rec: KubeObject): ListedRelease => {
    const field = str(obj(rec.data).release);
    if (!field) throw new Error(`helm release record ${rec.metadata.name ?? ''} has no release data`);
    return listedRelease(decodeRelease(kind === 'Secret' ? Buffer.from(field, 'base64').toString('utf8') : field));
  };
  const listed = decode(newest);
  if (!statusMatches(listed.entry.status, states)) return undefined;
  // `helm get values|manifest|notes|hooks NAME` (no --revision, as kubernetes.core runs them) read
  // the newest revision, whatever revision the listed row is
  const latest = newestOf(all);
  return latest === undefined || latest === newest ? listed : { ...withoutEntry(decode(latest)), entry: listed.entry };
}

function withoutEntry(r: ListedRelease): Omit<ListedRelease, 'entry'> {
  const { entry: _entry, ...rest } = r;
  return rest;
}

/** `helm get notes` output: `NOTES:` and the notes, `''` when the release has none (helm 3 and 4). */
export function notesText(notes: string): string {
  return notes ? `NOTES:\n${notes}\n` : '';
}

/**
 * helm's flags for `states` (`--deployed`, …; `all`: `--all` on helm 3, every state's flag on
 * helm 4, which removed `--all` — the flag kubernetes.core's `helm list … --all` fails on).
 */
export function listFlags(states: readonly ListState[], helmMajor: number): string[] {
  const every = ['--deployed', '--failed', '--pending', '--superseded', '--uninstalled', '--uninstalling'];
  const flags = states.flatMap((s) => (s === 'all' ? (helmMajor >= 4 ? every : ['--all']) : [`--${s}`]));
  return [...new Set(flags)];
}

/**
 * The same through helm (`helm list -o json --filter ^NAME$`, then `helm get all`-style reads as
 * JSON): for storage drivers kplay cannot read itself.
 */
export async function listReleaseWithHelm(helm: HelmCli, name: string, namespace: string, states: readonly ListState[], signal?: AbortSignal): Promise<ListedRelease | undefined> {
  const escaped = name.replace(/[.]/g, '\\.');
  const r = await helm.runOk(`helm list ${name}`, ['list', '-n', namespace, '-o', 'json', '--filter', `^${escaped}$`, ...listFlags(states, helm.major)], { signal });
  const rows = parseHelmJson(r.stdout, 'helm list');
  const row = Array.isArray(rows) ? rows.filter(isMap).find((x) => x.name === name) : undefined;
  if (!row) return undefined;
  const revision = str(row.revision);
  // the details of the newest revision (no --revision), as kubernetes.core reads them
  const status = await helm.runOk(`helm status ${name}`, ['status', name, '-n', namespace, '-o', 'json'], { signal });
  const listed = listedRelease(parseHelmJson(status.stdout, 'helm status'));
  const values = await helm.runOk(`helm get values ${name}`, ['get', 'values', name, '-n', namespace, '-o', 'json'], { signal });
  const hooks = await helm.runOk(`helm get hooks ${name}`, ['get', 'hooks', name, '-n', namespace], { signal });
  const config = parseHelmJson(values.stdout, 'helm get values');
  return {
    ...listed,
    entry: { name: str(row.name), namespace: str(row.namespace), revision, updated: str(row.updated), status: str(row.status), chart: str(row.chart), app_version: str(row.app_version) },
    config: isMap(config) ? config : {},
    hooks: hooks.stdout.trim() ? [{ path: '', manifest: hooks.stdout }] : [],
  };
}
