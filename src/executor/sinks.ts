/**
 * Places a secret cannot be masked: object names and namespaces, labels, annotations, ConfigMap
 * data, container command lines and env values, hosts, command lines of `command`/`shell`, URLs.
 * Whoever can read the object (or the process list, the DNS, a proxy's log) sees the value, and
 * run records keep it. A task argument that derives from kplay's own secret (a `!secret` scalar,
 * see `taint.ts`) and ends up in one of them is refused before anything is written — in check mode
 * and plans too — unless the task opts in with the variable `kplay_allow_secret_in` (a list of the
 * sink kinds below). Every other secret is one Ansible knows (Vault, `no_log`, a Secret's data read
 * from the cluster, a variable named like a password): ansible-playbook writes it where the
 * playbook says, and so does kplay, masked in its own output, with a warning naming the field and
 * the variables (never the value). A Secret's `data`/`stringData`, env `valueFrom`, helm values,
 * request headers and bodies are not sinks: that is where secrets belong.
 */
import { loadAllDocuments } from '../k8s/kcore.js';
import type { TaintedLeaf } from './taint.js';
import { pathText } from './taint.js';
import { isRecord } from '../core/shape.js';

type Seg = string | number;

/** The kinds of place a secret-derived value is refused in (what `kplay_allow_secret_in` lists). */
export const SINK_KINDS = ['name', 'namespace', 'labels', 'annotations', 'configmap', 'command', 'env', 'host', 'url'] as const;
/** One of {@link SINK_KINDS}. */
export type SinkKind = (typeof SINK_KINDS)[number];

/**
 * Where a value is warned of also when it derives from a variable merely *named* like a password or
 * token (`{{ db_password | lower }}` as an object name), not declared secret: places no playbook
 * means a password to go. Command lines, env values, URLs, hosts and ConfigMap data are warned of
 * only for declared secrets, since Ansible playbooks commonly pass `{{ db_password }}` there.
 */
export const BY_NAME_KINDS: ReadonlySet<SinkKind> = new Set<SinkKind>(['name', 'namespace', 'labels', 'annotations']);

/** The variable a task (or block, play) opts in with. */
export const ALLOW_VAR = 'kplay_allow_secret_in';

/** Why each kind of place cannot hold a secret (for the error). */
const WHY: Record<SinkKind, string> = {
  name: 'object names are shown to anyone who may list the kind, and appear in events, audit logs and run records',
  namespace: 'namespace names are shown to anyone who may list namespaces, and appear in events, audit logs and run records',
  labels: 'labels are shown to anyone who may read the object, and are indexed for selectors',
  annotations: 'annotations are shown to anyone who may read the object',
  configmap: 'ConfigMap data is readable by anyone who may read ConfigMaps (a Secret is where a secret belongs)',
  command: 'command lines are shown in process lists and in the pod spec',
  env: 'a container\'s env value is part of the pod spec, readable by anyone who may read the workload (use env valueFrom.secretKeyRef)',
  host: 'hosts end up in DNS queries, certificates and access logs',
  url: 'URLs (path and query) end up in access logs and proxies',
};

/** One place in the rendered arguments where a value cannot be masked. */
export interface Sink {
  /** Where the value is in the rendered arguments (a YAML text definition adds the document index). */
  path: Seg[];
  /** The field as shown in the error (keys that are values — label keys — are not shown). */
  field: string;
  kind: SinkKind;
  /** The value written there. */
  value: string;
  /** The object it belongs to (`a ConfigMap`), when known. */
  object?: string;
}

class Collector {
  readonly sinks: Sink[] = [];
  add(path: Seg[], kind: SinkKind, value: unknown, object?: string, field = pathText(path)): void {
    if (typeof value === 'string' || typeof value === 'number') this.sinks.push({ path, field, kind, value: String(value), object });
  }
  /** Keys and values of a map (labels, annotations, ConfigMap data): keys are reported as `<field> (a key)`. */
  map(path: Seg[], kind: SinkKind, value: unknown, object?: string): void {
    if (!isRecord(value)) return;
    for (const [k, v] of Object.entries(value)) {
      this.add(path, kind, k, object, `${pathText(path)} (a key)`);
      this.add([...path, k], kind, v, object, `${pathText(path)} (a value)`);
    }
  }
}

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/** `metadata` of an object or a template: name, generateName, namespace, labels, annotations. */
function metadataSinks(c: Collector, meta: unknown, path: Seg[], object: string | undefined): void {
  if (!isRecord(meta)) return;
  c.add([...path, 'name'], 'name', meta.name, object);
  c.add([...path, 'generateName'], 'name', meta.generateName, object);
  c.add([...path, 'namespace'], 'namespace', meta.namespace, object);
  c.map([...path, 'labels'], 'labels', meta.labels, object);
  c.map([...path, 'annotations'], 'annotations', meta.annotations, object);
}

/** Containers (command, args, env values) and nested templates' metadata, anywhere under a spec. */
function specSinks(c: Collector, v: unknown, path: Seg[], object: string | undefined, depth: number): void {
  if (depth > 16 || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => specSinks(c, x, [...path, i], object, depth + 1));
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    const p = [...path, k];
    if (k === 'metadata') metadataSinks(c, x, p, object);
    else if (CONTAINER_LISTS.has(k) && Array.isArray(x)) {
      x.forEach((ctr, i) => {
        if (!isRecord(ctr)) return;
        const cp = [...p, i];
        for (const key of ['command', 'args'] as const) if (Array.isArray(ctr[key])) (ctr[key] as unknown[]).forEach((a, j) => c.add([...cp, key, j], 'command', a, object));
        if (Array.isArray(ctr.env)) ctr.env.forEach((e, j) => isRecord(e) && c.add([...cp, 'env', j, 'value'], 'env', e.value, object));
      });
    } else specSinks(c, x, p, object, depth + 1);
  }
}

/** The sinks of a Kubernetes object, a list of them, or a `kind: List`. */
function objectSinks(c: Collector, v: unknown, path: Seg[], depth = 0): void {
  if (depth > 4) return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => objectSinks(c, x, [...path, i], depth + 1));
    return;
  }
  if (!isRecord(v)) return;
  const kind = typeof v.kind === 'string' ? v.kind : undefined;
  if (kind === 'List' || (kind?.endsWith('List') && Array.isArray(v.items))) {
    objectSinks(c, v.items, [...path, 'items'], depth + 1);
    return;
  }
  const object = kind ? `a ${kind}` : undefined;
  metadataSinks(c, v.metadata, [...path, 'metadata'], object);
  if (kind === 'Secret') return; // data and stringData: where secrets belong
  if (kind === 'ConfigMap') {
    c.map([...path, 'data'], 'configmap', v.data, object);
    c.map([...path, 'binaryData'], 'configmap', v.binaryData, object);
  }
  const spec = v.spec;
  if (isRecord(spec)) {
    if (kind === 'Ingress') {
      if (Array.isArray(spec.rules)) spec.rules.forEach((r, i) => isRecord(r) && c.add([...path, 'spec', 'rules', i, 'host'], 'host', r.host, object));
      if (Array.isArray(spec.tls)) spec.tls.forEach((t, i) => isRecord(t) && Array.isArray(t.hosts) && t.hosts.forEach((h, j) => c.add([...path, 'spec', 'tls', i, 'hosts', j], 'host', h, object)));
    }
    if (kind === 'Service') c.add([...path, 'spec', 'externalName'], 'host', spec.externalName, object);
    specSinks(c, spec, [...path, 'spec'], object, 0);
  }
}

/** A definition argument: objects, or YAML text (several documents) as `k8s` takes it. */
function definitionSinks(c: Collector, v: unknown, path: Seg[]): void {
  if (typeof v === 'string') {
    let docs: unknown[];
    try {
      docs = loadAllDocuments(v, 'definition');
    } catch {
      return; // the module reports text that does not parse
    }
    docs.forEach((d, i) => objectSinks(c, d, [...path, i]));
    return;
  }
  objectSinks(c, v, path);
}

/** The URL without its user:password part (sent as an Authorization header and masked, not in the request line). */
function urlWithoutUserinfo(v: unknown): unknown {
  return typeof v === 'string' ? v.replace(/^([a-z][\w+.-]*:\/\/)[^@/?#]*@/i, '$1') : v;
}

/** Every sink in the (rendered, validated) arguments of module `module`. */
export function sinksOf(module: string, args: unknown): Sink[] {
  const c = new Collector();
  if (!isRecord(args)) return c.sinks;
  switch (module) {
    case 'k8s':
    case 'k8s_service':
      for (const k of ['resource_definition', 'definition', 'inline']) definitionSinks(c, args[k], [k]);
      c.add(['name'], 'name', args.name);
      c.add(['generate_name'], 'name', args.generate_name);
      c.add(['namespace'], 'namespace', args.namespace);
      break;
    case 'k8s_apply':
      definitionSinks(c, args.definition, ['definition']);
      c.add(['namespace'], 'namespace', args.namespace);
      c.add(['prune_id'], 'labels', args.prune_id);
      break;
    case 'helm':
      for (const k of ['release_name', 'name']) c.add([k], 'name', args[k], 'a helm release');
      for (const k of ['release_namespace', 'namespace']) c.add([k], 'namespace', args[k], 'a helm release');
      break;
    case 'helm_release':
      c.add(['name'], 'name', args.name, 'a helm release');
      c.add(['namespace'], 'namespace', args.namespace, 'a helm release');
      break;
    case 'command':
    case 'shell':
      c.add(['_raw_params'], 'command', args._raw_params);
      c.add(['cmd'], 'command', args.cmd);
      if (Array.isArray(args.argv)) args.argv.forEach((a, i) => c.add(['argv', i], 'command', a));
      break;
    case 'uri':
    case 'get_url':
    case 'http_check':
      c.add(['url'], 'url', urlWithoutUserinfo(args.url));
      break;
    default:
      break;
  }
  return c.sinks;
}

function startsWith(path: readonly Seg[], prefix: readonly Seg[]): boolean {
  return prefix.length <= path.length && prefix.every((s, i) => s === path[i]);
}

/** A sink that holds a secret-derived value, and the variables it derives from. */
export interface SinkHit {
  sink: Sink;
  sources: string[];
  /** The value derives from kplay's own secret (`!secret`): refused unless the task opts in; the others are warned of. */
  own: boolean;
}

/**
 * The sinks holding a value derived from a declared secret: a tainted argument at or above the
 * sink's place whose derived parts the sink's value contains (so `metadata.name` of a Secret whose
 * `stringData` reads a secret is not hit, while `name: "app-{{ pw | lower }}"` is).
 */
export function secretSinks(module: string, args: unknown, leaves: readonly TaintedLeaf[]): SinkHit[] {
  if (leaves.length === 0) return [];
  const hits: SinkHit[] = [];
  for (const sink of sinksOf(module, args)) {
    const sources = new Set<string>();
    let own = false;
    for (const leaf of leaves) {
      if (leaf.byName && !BY_NAME_KINDS.has(sink.kind)) continue;
      if (!startsWith(sink.path, leaf.path) && leaf.path.length > 0) continue;
      if (!leaf.parts.some((p) => sink.value.includes(p))) continue;
      for (const s of leaf.sources) sources.add(s);
      if (leaf.own) own = true;
    }
    if (sources.size) hits.push({ sink, sources: [...sources], own });
  }
  return hits;
}

/** The sink kinds a task opted in to (`kplay_allow_secret_in`): a list or one kind; an unknown kind is an error. */
export function allowedSinks(value: unknown): Set<SinkKind> | string {
  if (value === undefined || value === null || value === false || value === '') return new Set();
  const list = Array.isArray(value) ? value : [value];
  const out = new Set<SinkKind>();
  for (const v of list) {
    const k = typeof v === 'string' ? v.trim() : v;
    if (typeof k !== 'string' || !(SINK_KINDS as readonly string[]).includes(k)) {
      return `${ALLOW_VAR}: unknown kind ${JSON.stringify(k)}; give a list of: ${SINK_KINDS.join(', ')}`;
    }
    out.add(k as SinkKind);
  }
  return out;
}

/** The fields of `hits` as the error and the warning name them (never a value: only fields and variable names). */
function hitLines(hits: readonly SinkHit[], mask: (s: string) => string): string[] {
  const lines = hits.slice(0, 5).map((h) => `${mask(h.sink.field)}${h.sink.object ? ` of ${mask(h.sink.object)}` : ''} (${h.sink.kind}) from ${h.sources.join(', ')}`);
  if (hits.length > 5) lines.push(`and ${hits.length - 5} more`);
  return lines;
}

/** The error for the first refused sink (never shows a value: only fields and variable names). */
export function refusal(hits: readonly SinkHit[], where: { task: string; cluster: string }, mask: (s: string) => string): string {
  const kinds = [...new Set(hits.map((h) => h.sink.kind))];
  const lines = hitLines(hits, mask);
  return (
    `task '${mask(where.task)}' on cluster '${where.cluster}': refusing to write a value derived from a secret where it cannot be masked: ${lines.join('; ')}. ` +
    `${kinds.map((k) => WHY[k]).join('; ')}. Nothing was written. ` +
    `Keep the secret in a Secret's data/stringData and refer to it (env valueFrom.secretKeyRef, a volume), or, if this is intended, ` +
    `opt in for this task: \`vars: { ${ALLOW_VAR}: [${kinds.join(', ')}] }\``
  );
}

/** A secret-derived value found where it cannot be masked while a module rendered a template file (`k8s` `template:`). */
export class SecretSinkError extends Error {
  override readonly name = 'SecretSinkError';
}

/**
 * The warning for the `hits` that derive from secrets Ansible knows (not kplay's own `!secret`):
 * written as ansible-playbook writes them, and said so; undefined when there are none.
 */
export function hitsWarning(hits: readonly SinkHit[], mask: (s: string) => string): string | undefined {
  const known = hits.filter((h) => !h.own);
  if (known.length === 0) return undefined;
  return (
    `writes a value derived from a secret where it cannot be masked: ${hitLines(known, mask).join('; ')}. ` +
    `kplay masks it in its own output, as ansible-playbook writes it; whoever can read the object (or the process list, the access log) sees it. ` +
    'Keep a secret in a Secret\'s data/stringData and refer to it (env valueFrom.secretKeyRef, a volume); ' +
    `a value tagged !secret is refused there unless the task opts in (${ALLOW_VAR})`
  );
}

/**
 * The error for the `hits` from kplay's own secrets (`!secret`) the task did not opt in to (`allow()`
 * reads `kplay_allow_secret_in`; a bad value is an error of its own), or undefined when every such
 * hit is allowed. Hits from secrets Ansible knows are never refused ({@link hitsWarning}).
 */
export function refuseHits(all: readonly SinkHit[], allow: () => unknown, where: { task: string; cluster: string }, mask: (s: string) => string): string | undefined {
  const hits = all.filter((h) => h.own);
  if (hits.length === 0) return undefined;
  let allowed: ReturnType<typeof allowedSinks>;
  try {
    allowed = allowedSinks(allow());
  } catch (e) {
    allowed = `${ALLOW_VAR}: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (typeof allowed === 'string') return allowed;
  const refused = hits.filter((h) => !allowed.has(h.sink.kind));
  return refused.length ? refusal(refused, where, mask) : undefined;
}
