/**
 * `k8s_scale` (kubernetes.core.k8s_scale): set the replicas of Deployments, ReplicaSets,
 * StatefulSets, ReplicationControllers (the parallelism of a Job), one by name or several by label
 * selectors, optionally only when the current count (or resourceVersion) is the expected one, and
 * wait for the rollout.
 */
import { readFile } from 'node:fs/promises';
import { asList, buildDefinitions, defineModule, diffEntry, errorMessage, kcoreDiff, findSource, k8sAuthProperties, kcoreResource, KubeApiError, taskClient, labelOf, loadAllDocuments, maskObject, normalizeObject, secretValues, waitLikeKcore, Default, Type, type DiffEntry, type KubeClient, type KubeObject, type ModuleContext, type ObjectRef } from 'kplay/sdk';

const raw = (description: string): ReturnType<typeof Type.Unsafe<unknown>> => Type.Unsafe<unknown>({ type: ['object', 'array', 'string'], description });

const schema = Type.Object(
  {
    replicas: Type.Integer({ minimum: 0, description: 'The wanted number of replicas (of a Job: its parallelism).' }),
    current_replicas: Type.Optional(Type.Integer({ minimum: 0, description: 'Scale only when the object has this many replicas now (a Job: this parallelism); otherwise nothing is done and `warning` says why.' })),
    resource_version: Type.Optional(Type.String({ description: 'Scale only when the object\'s resourceVersion is this one; otherwise nothing is done and `warning` says why.' })),
    wait: Default(Type.Boolean({ description: 'Wait until a scaled Deployment, StatefulSet or DaemonSet is ready with the new count (kplay\'s readiness rules). Not for Jobs; not in check mode.' }), true),
    wait_timeout: Default(Type.Integer({ minimum: 0, description: 'Seconds to wait with `wait`.' }), 20),
    wait_sleep: Default(Type.Integer({ minimum: 0, description: 'Accepted for compatibility: kplay watches instead of polling.' }), 5),
    kind: Type.Optional(Type.String({ description: 'Kind of the object(s), when no definition says.' })),
    name: Type.Optional(Type.String({ description: 'Name of the object; omit to scale what `label_selectors` select.' })),
    namespace: Type.Optional(Type.String({ description: 'Namespace of the object(s).' })),
    api_version: Default(Type.String({ description: 'API version. Aliases: `api`, `version`.' }), 'v1'),
    api: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
    version: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
    resource_definition: Type.Optional(raw('An object naming what to scale (its kind, apiVersion, name, namespace are used). Aliases: `definition`, `inline`.')),
    definition: Type.Optional(raw('Alias of `resource_definition`.')),
    inline: Type.Optional(raw('Alias of `resource_definition`.')),
    src: Type.Optional(Type.String({ description: 'A YAML file naming what to scale (its first object).' })),
    label_selectors: Default(Type.Unsafe<string | string[]>({ type: ['array', 'string'], items: { type: 'string' }, description: 'Without `name`: scale every object these label selectors select.' }), []),
    continue_on_error: Default(Type.Boolean({ description: 'With several objects: record a failure in `errors` and go on.' }), false),
    ...k8sAuthProperties,
  },
  { additionalProperties: false },
);

const one = Type.Object(
  {
    changed: Type.Boolean({ description: 'Whether the object was scaled.' }),
    result: Type.Record(Type.String(), Type.Unknown(), { description: 'The object after scaling (after the wait).' }),
    duration: Type.Optional(Type.Integer({ description: 'Seconds waited.' })),
    warning: Type.Optional(Type.String({ description: 'Why the object was not scaled (`current_replicas`/`resource_version` mismatch).' })),
    diff: Type.Optional(Type.Unknown({ description: 'The change (with `--diff`).' })),
  },
  { description: 'One object\'s result.' },
);

type One = { changed: boolean; result: Record<string, unknown>; duration?: number; warning?: string; diff?: DiffEntry; kdiff?: Record<string, unknown> };

export default defineModule({
  name: 'k8s_scale',
  summary: 'kubernetes.core.k8s_scale: set the replicas of Deployments, StatefulSets, ReplicaSets (parallelism of Jobs) and wait for them',
  description:
    'Scales by patching `spec.replicas` (`spec.parallelism` of a Job); an object that already has the wanted count is not written (`ok`). `current_replicas` and `resource_version` are preconditions: when they do not hold, nothing is done and the result has a `warning` (not a failure, as kubernetes.core). With one object the result is `{changed, result, duration}`; with several (label selectors) `{changed, results: [...]}` (and `errors` with `continue_on_error`). Check mode sends a server dry-run. Connection settings as `k8s`.',
  usesCluster: true,
  declaresState: true,
  checkMode: 'supported',
  diffMode: 'supported',
  schema,
  result: Type.Object({
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'One object: the object after scaling (`{}` when a precondition did not hold).' })),
    duration: Type.Optional(Type.Integer({ description: 'One object with `wait`: seconds waited.' })),
    warning: Type.Optional(Type.String({ description: 'One object: why it was not scaled.' })),
    results: Type.Optional(Type.Array(one, { description: 'Several objects: one result each.' })),
    errors: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Several objects with `continue_on_error`: `{error, failed: true}` per failure.' })),
  }),
  examples: [
    { title: 'Scale a Deployment to 3 and wait for it', yaml: '- kubernetes.core.k8s_scale:\n    api_version: apps/v1\n    kind: Deployment\n    name: web\n    namespace: web\n    replicas: 3\n    wait_timeout: 60' },
    { title: 'Scale down only if it still has 3 replicas', yaml: '- kubernetes.core.k8s_scale:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    replicas: 1\n    current_replicas: 3' },
    { title: 'Scale every Deployment of an app', yaml: '- kubernetes.core.k8s_scale:\n    kind: Deployment\n    api_version: apps/v1\n    namespace: web\n    label_selectors: [app=web]\n    replicas: 0\n    wait: false' },
  ],
  async run(args, ctx) {
    const definitionArg = args.resource_definition ?? args.definition ?? args.inline;
    if (definitionArg !== undefined && args.src !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: resource_definition|src' };
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    let targets: KubeObject[];
    let apiVersion: string;
    let kind: string;
    try {
      const docs = definitionArg !== undefined ? (typeof definitionArg === 'string' ? loadAllDocuments(definitionArg, 'resource_definition') : Array.isArray(definitionArg) ? (definitionArg as unknown[]) : [definitionArg]) : args.src !== undefined ? loadAllDocuments(await readFile(findSource(ctx, args.src, 'files'), 'utf8'), args.src) : undefined;
      const [def] = buildDefinitions(docs, { kind: args.kind, apiVersion: args.version ?? args.api ?? args.api_version, name: args.name, namespace: args.namespace });
      const md = (def?.metadata ?? {}) as Record<string, unknown>;
      kind = typeof def?.kind === 'string' ? def.kind : '';
      apiVersion = typeof def?.apiVersion === 'string' ? def.apiVersion : 'v1';
      if (!kind) return { status: 'failed', msg: 'kind is required (or a definition that has one)' };
      const found = await kcoreResource(client, apiVersion, kind);
      const info = found.info;
      apiVersion = found.apiVersion;
      kind = info.kind;
      const namespace = info.namespaced && typeof md.namespace === 'string' ? md.namespace : undefined;
      const name = typeof md.name === 'string' && md.name ? md.name : undefined;
      if (name) {
        const o = await client.get({ apiVersion, kind, name, namespace }, ctx.signal);
        if (!o) return { status: 'failed', msg: `Failed to retrieve requested object: ${kind} "${name}" not found${namespace ? ` in namespace ${namespace}` : ''}` };
        targets = [o];
      } else {
        const selectors = asList(args.label_selectors);
        targets = (await client.list(apiVersion, kind, { namespace, labelSelector: selectors.length ? selectors.join(',') : undefined, signal: ctx.signal })).items;
      }
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(`Failed to retrieve requested object: ${errorMessage(e)}`) };
    }
    const multiple = targets.length > 1;
    const results: One[] = [];
    const errors: Record<string, unknown>[] = [];
    for (const t of targets) {
      const ref: ObjectRef = { apiVersion, kind, name: t.metadata.name ?? '', namespace: t.metadata.namespace };
      const where = `kind=${kind} name=${ref.name} namespace=${ref.namespace ?? 'None'}`;
      const isJob = kind.toLowerCase() === 'job';
      const spec = (t as { spec?: Record<string, unknown> }).spec ?? {};
      const count = isJob ? spec.parallelism : spec.replicas;
      if (typeof count !== 'number') {
        const error = `Failed to retrieve the available count for object ${where}.`;
        if (multiple && args.continue_on_error) {
          errors.push({ error, failed: true });
          continue;
        }
        return { status: 'failed', msg: error, data: multiple ? { results } : { result: {} } };
      }
      let warning: string | undefined;
      if (args.resource_version !== undefined && args.resource_version !== t.metadata.resourceVersion) warning = `expected resource version ${args.resource_version} does not match with actual ${t.metadata.resourceVersion ?? ''} for object ${where}.`;
      else if (args.current_replicas !== undefined && args.current_replicas !== count) warning = `current replicas ${args.current_replicas} does not match with actual ${count} for object ${where}.`;
      if (warning) {
        ctx.log.warn(warning);
        if (!multiple) return { status: 'ok', msg: warning, data: { warning, result: {}, ...(args.wait ? { duration: 0 } : {}) } };
        results.push({ warning, changed: false, result: {} });
        continue;
      }
      try {
        results.push(await scaleOne(client, ref, t, count, args, isJob, ctx));
      } catch (e) {
        if (e instanceof Error && e.name === 'UnreachableError') throw e;
        const error = ctx.mask(errorMessage(e));
        if (multiple && args.continue_on_error) errors.push({ error, failed: true });
        else return { status: 'failed', msg: error, data: multiple ? { results } : e instanceof ScaleTimeout ? e.result : { result: {} }, changed: e instanceof ScaleTimeout };
      }
    }
    const changed = results.some((r) => r.changed);
    const diff = ctx.diffMode ? results.flatMap((r) => (r.diff ? [r.diff] : [])) : undefined;
    const msg = `${results.filter((r) => r.changed).length} ${ctx.checkMode ? 'would be ' : ''}scaled, ${results.filter((r) => !r.changed).length} unchanged${errors.length ? `, ${errors.length} failed` : ''}`;
    if (!multiple) {
      const r = results[0];
      // with --diff kubernetes.core registers `{before, after}` of what differs (`{}` when nothing does)
      const kd = ctx.diffMode ? { diff: r?.kdiff ?? {} } : {};
      const data = r ? { result: r.result, ...(r.duration !== undefined ? { duration: r.duration } : {}), ...kd } : { result: {}, ...kd };
      return changed ? { status: 'changed', registerMsg: false, msg, data, diff, registerDiff: false } : { status: 'ok', registerMsg: false, msg: targets.length ? msg : 'nothing to scale', data };
    }
    const data = { results: results.map(({ diff: _d, kdiff, ...rest }) => (ctx.diffMode ? { ...rest, diff: kdiff ?? {} } : rest)), ...(errors.length ? { errors } : {}) };
    return changed ? { status: 'changed', registerMsg: false, msg, data, diff, registerDiff: false } : { status: 'ok', registerMsg: false, msg, data };
  },
});

/** A scale whose wait timed out (its partial result is registered). */
class ScaleTimeout extends Error {
  constructor(
    msg: string,
    readonly result: Record<string, unknown>,
  ) {
    super(msg);
  }
}

async function scaleOne(client: KubeClient, ref: ObjectRef, live: KubeObject, count: number, args: { replicas: number; wait: boolean; wait_timeout: number }, isJob: boolean, ctx: ModuleContext): Promise<One> {
  const show = (o: KubeObject): Record<string, unknown> => {
    const copy = { ...o, metadata: { ...o.metadata } } as KubeObject & { metadata: Record<string, unknown> };
    delete copy.metadata.managedFields;
    for (const v of secretValues(copy)) ctx.addSecret(v);
    return copy as unknown as Record<string, unknown>;
  };
  if (count === args.replicas) return { changed: false, result: show(live), ...(args.wait ? { duration: 0 } : {}) };
  const patch = { spec: isJob ? { parallelism: args.replicas } : { replicas: args.replicas } };
  let after: KubeObject;
  try {
    after = await client.mergePatch(ref, patch, { dryRun: ctx.checkMode, signal: ctx.signal });
  } catch (e) {
    if (e instanceof KubeApiError) throw new Error(`Scale request failed: ${e.message}`, { cause: e });
    throw e;
  }
  const out: One = { changed: true, result: show(after), diff: diffEntry(labelOf(ref), maskObject(normalizeObject(live)), maskObject(normalizeObject(after)), (s) => ctx.mask(s)), kdiff: kcoreDiff((o) => ({ ...o }), live, after) };
  if (args.wait && !isJob) {
    out.duration = 0;
    if (!ctx.checkMode) {
      const w = await waitLikeKcore(client, ref, { timeoutSeconds: args.wait_timeout, signal: ctx.signal, progress: (m) => ctx.log.progress(m) });
      out.duration = w.duration;
      if (w.object) out.result = show(w.object);
      if (!w.ok) throw new ScaleTimeout(`Resource scaling timed out: ${w.msg}`, { changed: true, result: out.result, duration: out.duration });
    }
  }
  return out;
}
