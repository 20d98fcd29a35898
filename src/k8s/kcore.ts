/**
 * What the kubernetes.core adapters (`k8s`, `k8s_info`, `k8s_scale`, …) share, following the
 * collection's module_utils: building resource definitions from the module's arguments
 * (`create_definitions`, `merge_params`), `hidden_fields`, label selector filtering,
 * `wait_condition` and the argument fragments of its doc_fragments (wait options, delete options).
 */
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { withoutBom } from '../load/bom.js';
import { fastLoadAll } from '../load/fast-yaml.js';
import { YAML11_TAGS } from '../load/yaml11.js';
import { isRecord } from '../core/shape.js';
import { Default, StringEnum, Type } from '../core/args.js';
import type { KubeClient, KubeObject, ObjectRef } from './types.js';
import { waitFor, type WaitMode } from './wait.js';
import { readinessOf, type Readiness } from './readiness/index.js';

/** kubernetes.core's `wait`, `wait_sleep`, `wait_timeout`, `wait_condition` (k8s_wait_options). */
export const kcoreWaitProperties = {
  wait: Default(Type.Boolean({ description: 'Wait for the objects to reach the wanted state: Deployments, DaemonSets, StatefulSets and Pods ready (kplay\'s readiness rules), `wait_condition` when given, gone for `state: absent`; other kinds only need to exist. Not in check mode.' }), false),
  wait_sleep: Default(Type.Integer({ minimum: 0, description: 'Accepted for compatibility: kplay watches the objects instead of polling every `wait_sleep` seconds.' }), 5),
  wait_timeout: Default(Type.Integer({ minimum: 0, description: 'Seconds to wait with `wait: true`.' }), 120),
  wait_condition: Type.Optional(
    Type.Object(
      {
        type: Type.Optional(Type.String({ description: 'Condition type, e.g. `Ready`, `Available`, `Progressing`. Without it `wait_condition` is ignored.' })),
        status: Default(StringEnum(['True', 'False', 'Unknown'], { description: 'Wanted status of the condition.' }), 'True'),
        reason: Type.Optional(Type.String({ description: 'Wanted reason of the condition, e.g. `DeploymentPaused`.' })),
      },
      { additionalProperties: false, description: 'With `wait: true`: wait for this status condition (type, status, reason) instead of readiness.' },
    ),
  ),
};

/** kubernetes.core's `delete_options` (k8s_delete_options). */
export const kcoreDeleteOptions = Type.Object(
  {
    propagationPolicy: Type.Optional(StringEnum(['Foreground', 'Background', 'Orphan'], { description: 'How dependents are deleted; kplay\'s default is `Background`.' })),
    gracePeriodSeconds: Type.Optional(Type.Integer({ minimum: 0, description: 'Seconds before the object (a Pod) is killed.' })),
    preconditions: Type.Optional(
      Type.Object(
        {
          resourceVersion: Type.Optional(Type.String({ description: 'Delete only at this resourceVersion.' })),
          uid: Type.Optional(Type.String({ description: 'Delete only the object with this uid.' })),
        },
        { additionalProperties: false, description: 'Conditions the object must meet to be deleted.' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Options of the DELETE (`state: absent`).' },
);

/** A `wait_condition` after defaults. */
export interface WaitCondition {
  type?: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
}

/**
 * kubernetes.core's `custom_condition`: the object's condition of `type` has the wanted status
 * (and reason, when given).
 */
export function conditionMet(cond: WaitCondition, obj: KubeObject | undefined): boolean {
  const status = isRecord(obj?.status) ? obj.status : undefined;
  const conditions = status && Array.isArray(status.conditions) ? status.conditions.filter(isRecord) : [];
  const match = conditions.find((c) => c.type === cond.type);
  if (!match) return false;
  if (match.status !== cond.status) return false;
  return cond.reason ? match.reason === cond.reason : true;
}

/** An Ansible `list` argument: a list, or a comma-separated string (Ansible splits it). */
export function asList(v: string | readonly string[] | undefined): string[] {
  if (v === undefined) return [];
  return typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter((s) => s !== '') : [...v];
}

/** Every YAML document of `text`, empty ones dropped (PyYAML's `safe_load_all` + `filter(None, …)`). */
export function loadAllDocuments(given: string, source: string): unknown[] {
  const text = withoutBom(given);
  // PyYAML reads them (YAML 1.1 scalars: `yes`, `010`), as kubernetes.core does
  const fast = fastLoadAll(text, 'yaml11');
  const docs = fast ?? YAML.parseAllDocuments(text, { uniqueKeys: true, merge: true, schema: 'failsafe', customTags: [...YAML11_TAGS] }).map((d, i) => {
    const err = d.errors[0];
    if (err) throw new Error(`${source} document ${i + 1}: ${err.message}`);
    return d.toJS({ maxAliasCount: 100 }) as unknown;
  });
  return docs.filter((d) => d !== null && d !== undefined && d !== '' && !(isRecord(d) && Object.keys(d).length === 0));
}

/** The module arguments `merge_params` reads. */
export interface DefinitionParams {
  kind?: string;
  apiVersion: string;
  name?: string;
  namespace?: string;
  generateName?: string;
}

/**
 * kubernetes.core's `create_definitions`: the documents (from `resource_definition`, `src` or
 * `template`; `[{}]` when none), each completed with the module's kind/api_version/name/
 * namespace/generate_name where it does not say (`merge_params`), `*List` kinds flattened.
 */
export function buildDefinitions(docs: unknown[] | undefined, params: DefinitionParams): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [i, doc] of (docs ?? [{}]).entries()) {
    if (!isRecord(doc)) throw new Error(`definition ${i + 1} is not a map: ${JSON.stringify(doc)?.slice(0, 80) ?? String(doc)}`);
    const d = mergeParams(structuredClone(doc), params);
    if (typeof d.kind === 'string' && d.kind.endsWith('List')) {
      const kind = d.kind.slice(0, -4);
      for (const item of Array.isArray(d.items) ? d.items : []) {
        if (!isRecord(item)) continue;
        item.kind ??= kind;
        item.apiVersion ??= d.apiVersion;
        out.push(mergeParams(item, params));
      }
    } else out.push(d);
  }
  return out;
}

function mergeParams(d: Record<string, unknown>, p: DefinitionParams): Record<string, unknown> {
  if (d.kind === undefined) d.kind = p.kind ?? null;
  if (d.apiVersion === undefined) d.apiVersion = p.apiVersion;
  if (!isRecord(d.metadata)) d.metadata = {};
  const md = d.metadata as Record<string, unknown>;
  if (p.namespace && md.namespace === undefined) md.namespace = p.namespace;
  if (p.name && md.name === undefined) md.name = p.name;
  if (p.generateName && md.generateName === undefined) md.generateName = p.generateName;
  return d;
}

/** One key of a `hidden_fields` path: `a.b[0].c`, `metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]`. */
function splitField(field: string): [string, string] {
  const lb = field.indexOf('[');
  const rb = field.indexOf(']');
  const dot = field.indexOf('.');
  if (lb === 0) {
    let rest = field.slice(rb + 1);
    if (rest.startsWith('.')) rest = rest.slice(1);
    return [field.slice(1, rb), rest];
  }
  if (lb !== -1 && (dot === -1 || lb < dot)) return [field.slice(0, lb), field.slice(lb)];
  return dot === -1 ? [field, ''] : [field.slice(0, dot), field.slice(dot + 1)];
}

function hideOne(v: unknown, keys: string[]): unknown {
  const [key, ...rest] = keys;
  if (key === undefined) return v;
  if (Array.isArray(v)) {
    if (!/^\d+$/.test(key)) return v;
    const i = Number(key);
    if (i >= v.length) return v;
    if (rest.length === 0) return v.filter((_, j) => j !== i);
    const copy = [...v];
    copy[i] = hideOne(copy[i], rest);
    return isEmpty(copy[i]) ? copy.filter((_, j) => j !== i) : copy;
  }
  if (!isRecord(v) || !(key in v)) return v;
  const copy = { ...v };
  if (rest.length === 0) delete copy[key];
  else {
    copy[key] = hideOne(copy[key], rest);
    if (isEmpty(copy[key])) delete copy[key];
  }
  return copy;
}

const isEmpty = (v: unknown): boolean => (Array.isArray(v) && v.length === 0) || (isRecord(v) && Object.keys(v).length === 0);

/** kubernetes.core's `hide_fields`: the object without the given fields (emptied parents removed). */
export function hideFields<T>(obj: T, fields: readonly string[] | undefined): T {
  let out: unknown = obj;
  for (const f of fields ?? []) {
    const keys: string[] = [];
    let rest = f;
    while (rest) {
      const [k, r] = splitField(rest);
      keys.push(k);
      rest = r;
    }
    out = hideOne(out, keys);
  }
  return out as T;
}

/** One requirement of a label selector. */
type Requirement = { key: string; op: 'in' | 'notin'; values: string[] } | { key: string; op: 'exists' | 'absent' };

/** Parse label selectors (`app=web`, `tier!=db`, `env in (a,b)`, `env notin (c)`, `key`, `!key`), one requirement or more each. */
export function parseSelectors(selectors: readonly string[]): Requirement[] {
  const reqs: Requirement[] = [];
  for (const sel of selectors) {
    // split on commas outside parentheses
    const parts: string[] = [];
    let depth = 0;
    let cur = '';
    for (const c of sel) {
      if (c === '(') depth++;
      if (c === ')') depth--;
      if (c === ',' && depth === 0) {
        parts.push(cur);
        cur = '';
      } else cur += c;
    }
    parts.push(cur);
    for (const raw of parts.map((p) => p.trim()).filter((p) => p !== '')) {
      let m: RegExpExecArray | null;
      if ((m = /^(\S+?)\s*(==|=|!=)\s*(\S*)$/.exec(raw))) reqs.push({ key: m[1] ?? '', op: m[2] === '!=' ? 'notin' : 'in', values: [m[3] ?? ''] });
      else if ((m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(raw))) reqs.push({ key: m[1] ?? '', op: m[2] === 'in' ? 'in' : 'notin', values: (m[3] ?? '').split(',').map((s) => s.trim()) });
      else if ((m = /^!\s*(\S+)$/.exec(raw))) reqs.push({ key: m[1] ?? '', op: 'absent' });
      else if (/^\S+$/.test(raw)) reqs.push({ key: raw, op: 'exists' });
      else throw new Error(`invalid label selector "${raw}": use key=value, key!=value, key in (a,b), key notin (a,b), key or !key`);
    }
  }
  return reqs;
}

/** True when an object's labels satisfy the selectors (kubernetes.core's `LabelSelectorFilter`). */
export function selectorsMatch(selectors: readonly string[], obj: { metadata?: unknown }): boolean {
  const md = isRecord(obj.metadata) ? obj.metadata : {};
  // as kubernetes.core: an object without labels matches no selector (not even `!key`)
  if (!isRecord(md.labels)) return false;
  const labels = md.labels;
  return parseSelectors(selectors).every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const v = labels[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case 'absent':
        return !has;
      case 'in':
        return has && r.values.includes(String(v));
      case 'notin':
        return !has || !r.values.includes(String(v));
    }
    return false;
  });
}

/** Python's `json.dumps(v, separators=(",", ":"))` (ensure_ascii) of data with sorted map keys, as kubernetes.core's `marshal`. */
function pyJson(v: unknown): string {
  const sorted = (x: unknown): unknown => (Array.isArray(x) ? x.map(sorted) : isRecord(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])])) : x);
  return JSON.stringify(sorted(v)).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * kubernetes.core's `generate_hash` (`append_hash: true`): 10 characters from the sha256 of a
 * ConfigMap's data (a Secret's data and type), kind and name; `undefined` for other kinds.
 */
export function definitionHash(def: Record<string, unknown>): string | undefined {
  if (def.kind !== 'ConfigMap' && def.kind !== 'Secret') return undefined;
  const md = isRecord(def.metadata) ? def.metadata : {};
  const name = typeof md.name === 'string' ? md.name : '';
  const generateName = typeof md.generateName === 'string' ? md.generateName : '';
  const key = name === '' && generateName ? 'generateName' : 'name';
  const keys = def.kind === 'ConfigMap' ? ['data', 'kind', key] : ['data', 'kind', key, 'type'];
  // keys in the order given (an OrderedDict), values with sorted keys
  const parts = keys.map((k) => {
    const v = k === key ? (key === 'name' ? name : generateName) : (def[k] ?? '');
    return `${JSON.stringify(k)}:${pyJson(v)}`;
  });
  const hex = createHash('sha256').update(`{${parts.join(',')}}`, 'utf8').digest('hex').slice(0, 10);
  const tr: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return hex.replace(/[013ae]/g, (c) => tr[c] ?? c);
}

/** Kinds kubernetes.core waits to be ready (its `RESOURCE_PREDICATES`); other kinds only need to exist. */
const READY_KINDS = new Set(['Deployment', 'DaemonSet', 'StatefulSet', 'Pod']);

/**
 * Readiness as kubernetes.core's waiter judges it: Deployments, DaemonSets and StatefulSets by
 * kplay's rules (which also fail fast on a container that cannot start: README), a Pod only once
 * every container is ready (`pod_ready`) — so a pod that ran to completion (`Succeeded`) is never
 * ready and fails at once, where kubernetes.core waits for it until the timeout —, any other kind
 * once it exists.
 */
export function kcoreReadiness(obj: KubeObject): Readiness {
  if (!READY_KINDS.has(obj.kind)) return { done: true, successful: true, message: 'exists' };
  if (obj.kind === 'Pod' && isRecord(obj.status) && obj.status.phase === 'Succeeded') {
    return { done: true, successful: false, message: 'pod has run to completion (Succeeded): its containers are not ready and will not be (kubernetes.core waits for ready containers)' };
  }
  return readinessOf(obj);
}

/** Outcome of {@link waitLikeKcore}. */
export interface KcoreWaitOutcome {
  ok: boolean;
  /** The object as last seen (undefined when no wait was needed). */
  object?: KubeObject;
  /** Whole seconds waited (kubernetes.core's `duration`). */
  duration: number;
  /** Why it did not finish. */
  msg: string;
}

/**
 * kubernetes.core's `wait` of a present object with kplay's watcher: `wait_condition` (type,
 * status, reason) when it has a type, else {@link kcoreReadiness} of Deployments, DaemonSets,
 * StatefulSets and Pods, else nothing to wait for.
 */
export async function waitLikeKcore(
  client: KubeClient,
  ref: ObjectRef,
  opts: { condition?: WaitCondition; timeoutSeconds: number; signal?: AbortSignal; progress?: (m: string) => void },
): Promise<KcoreWaitOutcome> {
  const cond = opts.condition?.type ? opts.condition : undefined;
  let mode: WaitMode | undefined;
  if (cond) mode = { type: 'check', describe: `condition ${cond.type ?? ''}=${cond.status}${cond.reason ? ` (${cond.reason})` : ''}`, check: (o) => Promise.resolve(conditionMet(cond, o)) };
  else if (READY_KINDS.has(ref.kind)) mode = { type: 'ready', rules: kcoreReadiness };
  if (!mode) return { ok: true, duration: 0, msg: '' };
  const started = Date.now();
  const w = await waitFor(client, [{ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, namespace: ref.namespace }], mode, { timeoutMs: opts.timeoutSeconds * 1000, signal: opts.signal, progress: opts.progress });
  return { ok: w.ok, object: w.objects[0], duration: Math.round((Date.now() - started) / 1000), msg: w.msg };
}
