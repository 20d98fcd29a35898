/**
 * Pure helpers for the kubernetes.core helm modules: `set_values` as helm flags, Go durations,
 * argument aliases, `helm get manifest`-style YAML lists, and the repositories file.
 */
import YAML from 'yaml';
import { parseHelmJson, parseValues } from './release.js';
import { isMap, type Values } from './values.js';

/** One item of kubernetes.core's `set_values`. */
export interface SetValue {
  /** `key=value` as helm's `--set*` flags take it. */
  value: string;
  /** Which flag: `raw` (`--set`), `string`, `json`, `file`, `literal`. @default raw */
  value_type?: 'raw' | 'string' | 'json' | 'file' | 'literal';
}

/** helm flags for `set_values`, in order (`--set a=b`, `--set-string c=d`, …). */
export function setValuesFlags(items: readonly SetValue[]): string[] {
  const out: string[] = [];
  for (const it of items) {
    const type = it.value_type ?? 'raw';
    out.push(type === 'raw' ? '--set' : `--set-${type}`, it.value);
  }
  return out;
}

/**
 * Seconds of a Go duration (`5m`, `1h30m`, `300s`, `1.5h`, `500ms`), as helm's `--timeout` reads it;
 * a bare number is seconds.
 * @throws Error when the text is not a duration
 */
export function parseGoDuration(text: string): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6, µs: 1e-6, ns: 1e-9 };
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * (unit[m[2] ?? 's'] ?? 1);
    end = re.lastIndex;
  }
  if (t === '' || end !== t.length) throw new Error(`'${text}' is not a duration (use e.g. 300s, 5m, 1h30m)`);
  return total;
}

/**
 * Resolve an argument given under its name and/or its alias (Ansible: both given → the alias wins,
 * with a warning). Returns the value and the warning, if any.
 */
export function aliased<T>(args: Record<string, unknown>, name: string, alias: string): { value: T | undefined; warning?: string } {
  const a = args[name] as T | undefined;
  const b = args[alias] as T | undefined;
  if (a !== undefined && b !== undefined) return { value: b, warning: `Both option ${name} and its alias ${alias} are set.` };
  return { value: b ?? a };
}

/** Multi-document YAML as a list, as PyYAML's `safe_load_all` gives it (YAML 1.1; an empty document is `null`). */
export function yamlDocuments(text: string): unknown[] {
  return YAML.parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
}

/** `helm get values -o json` output as a map (`{}` for helm's `null`). */
export function parseHelmValuesJson(text: string): Values {
  return parseValues(parseHelmJson(text, 'helm get values'));
}

/** A repository of helm's repositories file (`repositories.yaml`). */
export interface RepoEntry {
  name: string;
  url: string;
  username: string;
  password: string;
  pass_credentials_all: boolean;
  insecure_skip_tls_verify: boolean;
}

/** The repositories of a `repositories.yaml` text (`[]` for an empty or missing file). */
export function parseRepositories(text: string): RepoEntry[] {
  const v: unknown = text.trim() ? YAML.parse(text) : {};
  const list = isMap(v) && Array.isArray(v.repositories) ? v.repositories : [];
  const s = (x: unknown): string => (typeof x === 'string' ? x : '');
  return list.filter(isMap).map((r: Values) => ({
    name: s(r.name),
    url: s(r.url),
    username: s(r.username),
    password: s(r.password),
    pass_credentials_all: r.pass_credentials_all === true,
    insecure_skip_tls_verify: r.insecure_skip_tls_verify === true,
  }));
}

/**
 * The path of helm's repositories file from `helm env` output (`HELM_REPOSITORY_CONFIG="…"`).
 * @throws Error when helm did not print it
 */
export function repositoryConfigPath(helmEnv: string): string {
  const m = /^HELM_REPOSITORY_CONFIG="?([^"\n]*)"?$/m.exec(helmEnv);
  if (!m?.[1]) throw new Error('helm env did not print HELM_REPOSITORY_CONFIG');
  return m[1];
}

/** A helm error message worded for the kubernetes.core modules (their helm argument is `binary_path`, not `helm_binary`). */
export function kcoreMessage(msg: string): string {
  return msg.replace(/set helm_binary \/ KPLAY_HELM/g, 'set binary_path / KPLAY_HELM');
}
