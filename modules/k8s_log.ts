/**
 * `k8s_log` (kubernetes.core.k8s_log): read a container's log through the apiserver's `pods/log`,
 * of a pod by name, by label selector, or of the pods an object (a Deployment, a Job) selects,
 * as kubernetes.core 6.2.0 does.
 */
import { asList, defineModule, Default, errorMessage, findResource, groupVersion, k8sAuthProperties, KubeApiError, taskClient, Type, type KubeClient } from 'kplay/sdk';

/** A failure with kubernetes.core's message. */
class LogFailure extends Error {}

/** kubernetes.core's `extract_selectors`: an object's pod selector as label selector terms. */
export function extractSelectors(obj: Record<string, unknown>, what: string): string[] {
  const sel = (obj.spec as { selector?: unknown } | undefined)?.selector;
  if (!sel || typeof sel !== 'object') throw new LogFailure(`${what} does not support the log subresource directly, and no Pod selector was found on the object`);
  const s = sel as { matchLabels?: Record<string, unknown>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const out: string[] = [];
  if (!s.matchLabels && !s.matchExpressions) {
    for (const [k, v] of Object.entries(sel)) out.push(`${k}=${String(v)}`);
    return out;
  }
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) out.push(`${k}=${String(v)}`);
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'Exists') out.push(e.key);
    else if (e.operator === 'DoesNotExist') out.push(`!${e.key}`);
    else if (e.operator === 'In' || e.operator === 'NotIn') out.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(', ')})`);
    else throw new LogFailure(`The k8s_log module does not support the ${e.operator.toLowerCase()} matchExpression operator`);
  }
  return out;
}

const apiMessage = (e: unknown): string => (e instanceof KubeApiError ? e.apiMessage : errorMessage(e));

export default defineModule({
  name: 'k8s_log',
  summary: 'kubernetes.core.k8s_log: read the log of a pod (by name, label selector, or an object\'s pods)',
  description:
    'Registers `log` (the text) and `log_lines` (it split on newlines: a log ending in a newline has an empty last line, as kubernetes.core). With `label_selectors`, or `kind`/`name` of an object without logs of its own (a Deployment, a Job: its pod selector), the log is the first matching pod\'s, as kubectl. `container` picks the container (needed when a pod has several), `all_containers: true` joins every container\'s log; `tail_lines`, `since_seconds` and `previous` are the log endpoint\'s `tailLines`, `sinceSeconds` and `previous`. Never reports changed; runs in check mode. Connection settings as `k8s`.',
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      kind: Default(Type.String({ minLength: 1, description: 'Kind of the object whose log to read: a Pod, or an object with a pod selector.' }), 'Pod'),
      api_version: Default(Type.String({ minLength: 1, description: 'API version of `kind`. Aliases: `api`, `version`.' }), 'v1'),
      api: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `api_version`.' })),
      version: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `api_version`.' })),
      name: Type.Optional(Type.String({ description: 'Name of the object (not with `label_selectors`).' })),
      namespace: Type.Optional(Type.String({ description: 'Namespace of the object.' })),
      label_selectors: Default(Type.Array(Type.String(), { description: 'Label selectors of the pods (the first one matching is read); not with `name`.' }), []),
      container: Type.Optional(Type.String({ description: 'Container whose log to read (not with `all_containers`).' })),
      since_seconds: Type.Optional(Type.Unsafe<string | number>({ type: ['string', 'integer'], description: 'Only the log of the last this many seconds.' })),
      previous: Default(Type.Boolean({ description: 'The log of the previous instance of the container.' }), false),
      tail_lines: Type.Optional(Type.Integer({ description: 'Only this many lines from the end.' })),
      all_containers: Type.Optional(Type.Boolean({ description: 'Every container\'s log, one after the other (not with `container`).' })),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    log: Type.String({ description: 'The log.' }),
    log_lines: Type.Array(Type.String(), { description: '`log` split on newlines.' }),
  }),
  examples: [
    { title: 'The log of a Deployment\'s first pod', yaml: '- kubernetes.core.k8s_log:\n    api_version: apps/v1\n    kind: Deployment\n    namespace: web\n    name: web\n    tail_lines: 20\n  register: web_log' },
    { title: 'By label, one container', yaml: '- kubernetes.core.k8s_log:\n    namespace: web\n    label_selectors: [app=web]\n    container: app\n  register: web_log' },
  ],
  async run(args, ctx) {
    if (args.container !== undefined && args.all_containers !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: container|all_containers' };
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    try {
      const log = await readLog(client, { ...args, api_version: args.version ?? args.api ?? args.api_version, label_selectors: asList(args.label_selectors) }, ctx.signal);
      return { status: 'ok', registerMsg: false, msg: `${log.split('\n').length - (log.endsWith('\n') ? 1 : 0)} log lines`, data: { log, log_lines: log.split('\n') } };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof LogFailure ? e.message : `k8s_log: ${errorMessage(e)}`) };
    }
  },
});

interface LogArgs {
  kind: string;
  api_version: string;
  name?: string;
  namespace?: string;
  label_selectors: string[];
  container?: string;
  since_seconds?: string | number;
  previous: boolean;
  tail_lines?: number;
  all_containers?: boolean;
}

async function readLog(client: KubeClient, a: LogArgs, signal: AbortSignal | undefined): Promise<string> {
  let name = a.name || undefined;
  const namespace = a.namespace || undefined;
  let selector = a.label_selectors.join(',');
  if (name && selector) throw new LogFailure('Only one of name or label_selectors can be provided');
  const info = await findResource(client, a.api_version, a.kind);
  if (!info) throw new LogFailure(`Failed to find exact match for ${a.api_version}.${a.kind} by [kind, name, singularName, shortNames]`);
  const isPod = info.kind === 'Pod' && info.group === '';
  if (!isPod) {
    if (!name) throw new LogFailure('name must be provided for resources that do not support the log subresource');
    const obj = await client.get({ apiVersion: groupVersion(info), kind: info.kind, name, namespace: info.namespaced ? namespace : undefined }, signal);
    if (!obj) throw new LogFailure(`${info.kind} ${namespace ? `${namespace}/` : ''}${name} not found.`);
    selector = extractSelectors(obj as unknown as Record<string, unknown>, `${groupVersion(info)} ${info.kind}`).join(',');
  }
  if (selector) {
    const pods = await client.list('v1', 'Pod', { namespace, labelSelector: selector, signal });
    const first = pods.items[0];
    if (!first) throw new LogFailure(`No pods in namespace ${namespace ?? 'None'} matched selector ${selector}`);
    name = first.metadata.name;
  }
  if (!name) throw new LogFailure('name must be provided for resources that do not support namespaced base url');
  if (!client.podLog) throw new LogFailure('k8s_log: this cluster connection cannot read logs');
  const ns = namespace ?? 'default';
  let containers: (string | undefined)[] = [undefined];
  if (a.all_containers) {
    try {
      const pod = await client.get({ apiVersion: 'v1', kind: 'Pod', name, namespace: ns }, signal);
      const statuses = (pod as { status?: { containerStatuses?: { name: string }[] } } | undefined)?.status?.containerStatuses;
      if (!pod || !Array.isArray(statuses)) throw new LogFailure(pod ? "'NoneType' object is not iterable" : `pods "${name}" not found`);
      containers = statuses.map((c) => c.name);
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      throw new LogFailure(`Unable to retrieve log from Pod due to: ${apiMessage(e)}`);
    }
  }
  let log = '';
  for (const c of containers) {
    try {
      log += await client.podLog(ns, name, { container: c ?? (a.container || undefined), sinceSeconds: a.since_seconds ? String(a.since_seconds) : undefined, previous: a.previous, tailLines: a.tail_lines || undefined }, signal);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) throw new LogFailure(`Pod ${namespace ?? 'None'}/${name} not found.`);
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      throw new LogFailure(`Unable to retrieve log from Pod due to: ${apiMessage(e)}`);
    }
  }
  return log;
}
