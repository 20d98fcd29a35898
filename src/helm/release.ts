/**
 * Types of what helm reports about a release, and parsers of helm's JSON outputs
 * (`status -o json`, `get metadata -o json`, `get values -o json`, `history -o json`,
 * `show chart`). Pure: no process is run here.
 */
import YAML from 'yaml';
import { isMap, type Values } from './values.js';

/** Release statuses helm stores. */
export type ReleaseStatusName =
  | 'unknown'
  | 'deployed'
  | 'uninstalled'
  | 'superseded'
  | 'failed'
  | 'uninstalling'
  | 'pending-install'
  | 'pending-upgrade'
  | 'pending-rollback';

/** Statuses that hold helm's lock (every other operation is refused until it is resolved). */
export const PENDING_STATUSES: readonly string[] = ['pending-install', 'pending-upgrade', 'pending-rollback'];

/** A release as `helm status -o json` (or `upgrade -o json`) describes it. */
export interface ReleaseInfo {
  name: string;
  namespace: string;
  /** Revision number (helm's `version`). */
  revision: number;
  /** `deployed`, `failed`, `pending-upgrade`, … */
  status: string;
  description: string;
  chart: string;
  chartVersion: string;
  appVersion: string;
  /** Rendered manifest of the revision (hooks excluded). */
  manifest: string;
  /** User-supplied values of the revision (helm's `config`), `{}` when none. */
  config: Values;
  /** How helm 4 applied the revision (`ssa` server-side, `csa` client-side); `''` when helm did not say (helm 3). */
  applyMethod: string;
}

/** `helm get metadata -o json`. */
export interface ReleaseMetadata {
  name: string;
  namespace: string;
  chart: string;
  version: string;
  appVersion: string;
  revision: number;
  status: string;
}

/** One line of `helm history -o json`. */
export interface HistoryEntry {
  revision: number;
  status: string;
  /** `podinfo-6.13.0` */
  chart: string;
  appVersion: string;
  description: string;
}

/** The parts of `Chart.yaml` kplay uses (`helm show chart`). */
export interface ChartMeta {
  name: string;
  version: string;
  appVersion: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : 0);
const obj = (v: unknown): Values => (isMap(v) ? v : {});

/** Parse JSON printed by helm; a clear error names the command when it is not JSON. */
export function parseHelmJson(text: string, what: string): unknown {
  const t = text.trim();
  if (t === '') return null;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    // helm may print warnings before the JSON on stdout (plugins, deprecations): take the JSON part.
    const i = t.search(/^[[{]/m);
    if (i > 0) {
      try {
        return JSON.parse(t.slice(i)) as unknown;
      } catch {
        // fall through
      }
    }
    throw new Error(`${what}: helm printed no JSON: ${t.slice(0, 200)}`);
  }
}

/** Parse `helm status -o json` / `helm upgrade -o json`. */
export function parseReleaseInfo(v: unknown): ReleaseInfo {
  const r = obj(v);
  const info = obj(r.info);
  const meta = obj(obj(r.chart).metadata);
  return {
    name: str(r.name),
    namespace: str(r.namespace),
    revision: num(r.version),
    status: str(info.status) || 'unknown',
    description: str(info.description),
    chart: str(meta.name),
    chartVersion: str(meta.version),
    appVersion: str(meta.appVersion),
    manifest: str(r.manifest),
    config: obj(r.config),
    applyMethod: str(r.apply_method),
  };
}

/** Parse `helm get metadata -o json`. */
export function parseMetadata(v: unknown): ReleaseMetadata {
  const r = obj(v);
  return {
    name: str(r.name),
    namespace: str(r.namespace),
    chart: str(r.chart),
    version: str(r.version),
    appVersion: str(r.appVersion),
    revision: num(r.revision),
    status: str(r.status),
  };
}

/** Parse `helm get values -o json` (`null` when the release has no user-supplied values). */
export function parseValues(v: unknown): Values {
  if (v === null || v === undefined) return {};
  if (!isMap(v)) throw new Error(`helm get values: expected a map, got ${Array.isArray(v) ? 'a list' : typeof v}`);
  return v;
}

/** Parse `helm history -o json`, oldest first. */
export function parseHistory(v: unknown): HistoryEntry[] {
  if (!Array.isArray(v)) return [];
  return v
    .map((e) => {
      const r = obj(e);
      return { revision: num(r.revision), status: str(r.status), chart: str(r.chart), appVersion: str(r.app_version), description: str(r.description) };
    })
    .sort((a, b) => a.revision - b.revision);
}

/**
 * The revision a pending release should go back to: the newest `deployed` or `superseded`
 * revision older than the pending one; `undefined` when there is none (a first install).
 */
export function lastGoodRevision(history: HistoryEntry[], pendingRevision: number): number | undefined {
  const good = history.filter((h) => h.revision < pendingRevision && (h.status === 'deployed' || h.status === 'superseded'));
  return good[good.length - 1]?.revision;
}

/** Parse `helm show chart` (Chart.yaml text). */
export function parseChartYaml(text: string): ChartMeta {
  const v: unknown = YAML.parse(text);
  const r = obj(v);
  const name = str(r.name);
  const version = str(r.version);
  if (!name || !version) throw new Error('helm show chart: Chart.yaml has no name or version');
  return { name, version, appVersion: str(r.appVersion) };
}
