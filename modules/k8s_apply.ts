/**
 * `k8s_apply`: server-side apply Kubernetes objects (inline, files, directories, globs or
 * templates) in dependency order; idempotent (no write when nothing would change), check
 * mode and diffs via SSA dry-runs, optional pruning and readiness wait.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { defineModule, kubeFor, unreachableAfter, WrittenResult, writtenNote, type WrittenEntry, applyObjects, deleteObjects, OWNER_LABEL, pruneObjects, ApplyConflictError, KubeApiError, loadSources, parseManifests, toObjects, parseDriftRules, driftOf, secretValues, waitFor, errorMessage, labelOf, Default, DriftResult, StringEnum, Type, type Args, type Static, type DiffEntry, type ModuleContext, type ModuleResult, type ObjectResult, type WaitTarget, type KubeObject } from 'kplay/sdk';

const LABEL_VALUE = '^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';

/** Kinds whose readiness is trivially true (not worth a watch). */
const TRIVIAL = new Set(['ConfigMap', 'Secret', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'NetworkPolicy', 'LimitRange', 'ResourceQuota', 'PriorityClass', 'Endpoints', 'EndpointSlice', 'Ingress', 'IngressClass', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'CronJob', 'StorageClass']);

const schema = Type.Object(
  {
    definition: Type.Optional(
      Type.Unsafe<unknown>({
        type: ['object', 'array'],
        description: 'Inline Kubernetes object, or a list of objects (a `kind: List` is flattened). Give exactly one of `definition`, `src`, `template`.',
        examples: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-config' }, data: { LOG_LEVEL: 'info' } }],
      }),
    ),
    src: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Manifest source relative to the playbook directory: a multi-document YAML/JSON file, a directory (every `*.yaml`, `*.yml`, `*.json` directly inside, sorted by name) or a glob (`manifests/*.yaml`, `**/*.yaml`).',
        examples: ['manifests/web.yaml', 'manifests/', 'manifests/**/*.yaml'],
      }),
    ),
    template: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A manifest file (relative to the playbook directory) rendered with the task variables (Jinja, strict) and then parsed as multi-document YAML.',
        examples: ['templates/web.yaml.liquid'],
      }),
    ),
    namespace: Default(
      Type.String({
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
        description: 'Namespace given to namespaced objects without `metadata.namespace` (cluster-scoped objects are not affected). Also where the prune record ConfigMap lives.',
        examples: ['web'],
      }),
      'default',
    ),
    state: Default(StringEnum(['present', 'absent'], { description: '`present`: create or update the objects. `absent`: delete them (reverse order; already absent objects are ok).' }), 'present'),
    field_manager: Default(
      Type.String({ minLength: 1, maxLength: 128, description: 'Server-side apply field manager name. Fields set by another manager conflict unless `force_conflicts: true`.', examples: ['kplay', 'team-web'] }),
      'kplay',
    ),
    force_conflicts: Default(
      Type.Boolean({
        description:
          'Take ownership of fields another field manager owns (SSA `force=true`). Without it a conflict with another applier or a controller fails the task, naming the manager and the fields (manual kubectl edits are taken back either way).',
      }),
      false,
    ),
    prune: Default(
      Type.Boolean({
        description:
          'Label every applied object `kplay.dev/owner: <prune_id>` and delete objects with that label that are no longer in the source (shown in the diff as deletions). Kinds and namespaces applied before are remembered in the ConfigMap `kplay-prune-<prune_id>` in `namespace`. Objects without the label are never pruned.',
      }),
      false,
    ),
    prune_id: Type.Optional(
      Type.String({
        pattern: LABEL_VALUE,
        description:
          'Identity of the applied set for `prune` (a label value). Default: a hash of the playbook directory and `src`/`template`. Required with `prune: true` and an inline `definition`. Set it explicitly to keep pruning working when files move.',
        examples: ['web-frontend'],
      }),
    ),
    wait: Default(
      Type.Boolean({
        description:
          'After applying, wait until the objects are ready (same rules as `wait_for`: rollouts complete, Jobs complete, Pods ready, PVCs bound, ...). Fails fast when pods of a rollout are in ImagePullBackOff, CrashLoopBackOff, ... Ignored in check mode.',
      }),
      false,
    ),
    wait_timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds to wait with `wait: true`; on timeout the task fails listing what was not ready and recent Warning events.' }), 300),
  },
  { additionalProperties: false },
);

/** Arguments of `k8s_apply` (after defaults). */
export type K8sApplyArgs = Args<typeof schema>;

const Action = StringEnum(['created', 'configured', 'unchanged', 'deleted']);

const result = Type.Object({
  resources: Type.Array(
    Type.Object({
      kind: Type.String(),
      apiVersion: Type.String(),
      name: Type.String(),
      namespace: Type.Optional(Type.String()),
      action: Action,
      changed_paths: Type.Optional(Type.Array(Type.String())),
      attempts: Type.Optional(Type.Integer({ minimum: 2 })),
    }),
    {
      description:
        'One entry per object: `kind`, `apiVersion`, `name`, `namespace`, `action` (created/configured/unchanged/deleted; in check mode what would happen), `changed_paths`, and `attempts` when its write took more than one (a server-side apply answered 500 by a webhook that timed out, 503, or cut off is sent again, with the backoff and bound of reads).',
    },
  ),
  objects: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The objects as applied (the server\'s answer; Secret values masked).' }),
  counts: Type.Record(Type.String(), Type.Integer(), { description: 'Objects per action, e.g. `{created: 1, configured: 0, unchanged: 4, deleted: 0}`.' }),
  drift: Type.Optional(DriftResult),
  written: Type.Optional(WrittenResult),
  warnings: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'The apiserver\'s warnings to this task\'s dry-runs and writes (deprecated APIs and fields, admission webhooks), one per object and warning: `Deployment web/api: spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`. Absent when there were none; an object that needs no request (unchanged) has none.',
    }),
  ),
});

/** What `k8s_apply` registers besides changed/failed/msg/diff. */
type K8sApplyResult = Static<typeof result>;

export default defineModule({
  name: 'k8s_apply',
  summary: 'Server-side apply Kubernetes objects in order; idempotent, with check mode, diffs, pruning and readiness wait',
  description: `Applies objects with server-side apply (SSA). The live objects are read (one LIST per kind and namespace) and compared with the manifests (ignoring status and server-managed metadata; resource quantities as the server stores them, \`cpu: 0.1\` = \`100m\`); where that cannot tell, the object is applied with \`dryRun=All\`. When nothing would change no write is sent and the task is \`ok\`; an absent object is created with one write. Objects are applied in groups, each in parallel: Namespaces (and cluster-wide kinds pods name, such as PriorityClasses), with CRDs alongside; then what workloads refer to (quotas, limits, RBAC, ServiceAccounts, ConfigMaps/Secrets, storage, Services), then workloads — when the task creates or changes CRDs, these two are read and planned at once but written once the apiserver serves those CRDs' kinds (as kapp orders a set; an operator then starts with its kinds served, and the apiserver establishes large CRDs without competing writes); custom resources of each new or changed CRD as soon as the apiserver serves its kinds (its names accepted: one status update before Established, and 5 s before it on a control plane of several apiservers; one watch of all CRDs when there are three or more); webhooks and APIServices last, after everything else; the task ends once every CRD it wrote is Established. The live state of every group of built-in kinds is read at the start (reads wait for no write), except objects in a Namespace of the set. A group that fails stops the groups after it; groups running alongside it finish first. Deletes run in reverse.

Manual edits are drift: fields last changed by an imperative kubectl command (\`kubectl edit/scale/patch/set\`: a \`kubectl*\` field manager whose entries are all \`Update\` operations) are taken back by the next run and named in the message. A field owned by any other field manager (another applier, a controller) makes the task fail with the manager and the fields, unless \`force_conflicts: true\`. Secret values are never shown: diffs show \`********\` or \`******** (changed)\`.

The apiserver's warnings to a dry-run or write (deprecated APIs and fields, admission webhooks) are task warnings, one per object, as kubectl prints its \`Warning:\` lines. A field the kind's schema does not declare (a typo) fails the task naming the object and the field: server-side apply refuses it.

Registers \`resources\` (\`[{kind, apiVersion, name, namespace, action}]\`, action one of created/configured/unchanged/deleted), \`objects\` (the applied objects, Secret values masked), \`counts\` and, when the server warned, \`warnings\`. A task that fails after writing some objects (a later object refused by a webhook or as invalid, a 413, its readiness wait) is \`changed\` all the same and registers \`written\`, what it wrote (also named in its message); \`resources\`, \`objects\` and \`counts\` then hold those objects.`,
  usesCluster: true,
  declaresState: true,
  checkMode: 'supported',
  diffMode: 'supported',
  schema,
  result,
  examples: [
    { title: 'Apply a directory of manifests into a namespace, showing what changes with --diff', yaml: '- name: deploy web\n  k8s_apply:\n    src: manifests/web/\n    namespace: web\n    wait: true' },
    {
      title: 'Apply an inline object',
      yaml: '- k8s_apply:\n    definition:\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: { name: app-config, namespace: web }\n      data: { LOG_LEVEL: "{{ log_level }}" }',
    },
    { title: 'Render a template with the task variables and prune objects removed from it', yaml: '- k8s_apply:\n    template: templates/app.yaml\n    namespace: app\n    prune: true\n    prune_id: app' },
    { title: 'Take over fields another applier owns (e.g. moving a Deployment from another team\'s tool to kplay)', yaml: '- k8s_apply:\n    src: manifests/web.yaml\n    force_conflicts: true' },
    { title: 'Delete objects', yaml: '- k8s_apply:\n    src: manifests/old.yaml\n    state: absent' },
  ],
  async run(args, ctx) {
    const sources = [args.definition !== undefined, args.src !== undefined, args.template !== undefined].filter(Boolean).length;
    if (sources !== 1) return { status: 'failed', msg: 'k8s_apply: give exactly one of definition, src, template' };
    let objects: KubeObject[];
    try {
      objects = await loadObjects(args, ctx);
    } catch (e) {
      return { status: 'failed', msg: `k8s_apply: ${errorMessage(e)}` };
    }
    if (objects.length === 0) return { status: 'ok', msg: 'no objects', data: { resources: [], objects: [], counts: {} } };
    for (const o of objects) for (const v of secretValues(o)) ctx.addSecret(v);

    const state = args.state;
    const prune = args.prune && state === 'present';
    let pruneId: string | undefined;
    if (prune) {
      if (args.prune_id) pruneId = args.prune_id;
      else if (args.definition !== undefined) return { status: 'failed', msg: 'k8s_apply: prune with an inline definition needs prune_id (the identity of the applied set)' };
      else pruneId = createHash('sha256').update(`${path.resolve(ctx.baseDir)}\u0000${args.src ?? args.template ?? ''}`).digest('hex').slice(0, 16);
      objects = objects.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { ...(o.metadata.labels ?? {}), [OWNER_LABEL]: pruneId ?? '' } } }));
    }

    const client = await kubeFor(ctx);
    const warnings: string[] = [];
    const warn = (m: string): void => {
      warnings.push(m);
      ctx.log.warn(m);
    };
    // Every write answered, in the order answered: when a later object fails, what the task changed.
    const written: ObjectResult[] = [];
    const common = { defaultNamespace: args.namespace, checkMode: ctx.checkMode, signal: ctx.signal, mask: (s: string) => ctx.mask(s), log: (m: string) => ctx.log.info(m), onWritten: (r: ObjectResult) => written.push(r) };
    let results: ObjectResult[];
    try {
      if (state === 'absent') results = await deleteObjects(client, objects, common);
      else {
        results = await applyObjects(client, objects, { ...common, warn, fieldManager: args.field_manager, force: args.force_conflicts, driftRules: parseDriftRules(ctx.vars.drift_ignore) });
        if (prune && pruneId) {
          const applied = results.map((r) => ({ apiVersion: r.ref.apiVersion, kind: r.ref.kind, metadata: { name: r.ref.name, namespace: r.ref.namespace } }));
          results.push(...(await pruneObjects(client, applied, { id: pruneId, recordNamespace: args.namespace, fieldManager: args.field_manager, ...common })));
        }
      }
    } catch (e) {
      return failure(e, ctx, written, warnings);
    }

    const data = resultData(results);
    if (warnings.length) data.warnings = warnings;
    const reclaimed = results.flatMap((r) => (r.plan.reclaimed ?? []).map((f) => `${f} on ${labelOf(r.ref)}`));
    const added = results.flatMap((r) => (r.plan.additions ?? []).map((a) => `${a.manager}: ${a.path} on ${labelOf(r.ref)}`));
    const summary = `${summarize(results, ctx.checkMode)}${reclaimed.length ? `; ${ctx.checkMode ? 'would take' : 'took'} back from manual edits: ${reclaimed.join(', ')}` : ''}${added.length ? `; ${ctx.checkMode ? 'would remove' : 'removed'} fields added by hand: ${added.join(', ')}` : ''}`;
    const diff: DiffEntry[] | undefined = ctx.diffMode ? results.filter((r) => r.action !== 'unchanged').map((r) => (r.note ? { ...r.plan.diff, label: `${r.plan.diff.label} (${r.note})` } : r.plan.diff)) : undefined;
    const changed = results.some((r) => r.action !== 'unchanged');
    // check mode: what a real run would fail with (another manager's fields); the plans are what a forced apply would change
    const conflicted = results.filter((r) => r.plan.conflict);
    if (conflicted.length) {
      const conflicts = conflicted.flatMap((r) => (r.plan.conflict?.conflicts ?? []).map((c) => ({ object: labelOf(r.ref), ...c })));
      return { status: 'failed', msg: ctx.mask(conflicted.map((r) => r.plan.conflict?.message ?? '').join('; ')), data: { ...data, conflicts }, diff };
    }

    if (args.wait && state === 'present' && !ctx.checkMode) {
      const targets: WaitTarget[] = results
        .filter((r) => r.action !== 'deleted' && !TRIVIAL.has(r.ref.kind) && !(r.ref.kind === 'Service' && (r.object?.spec as { type?: string } | undefined)?.type !== 'LoadBalancer'))
        .map((r) => ({ apiVersion: r.ref.apiVersion, kind: r.ref.kind, name: r.ref.name, namespace: r.ref.namespace }));
      if (targets.length) {
        try {
          const w = await waitFor(client, targets, { type: 'ready' }, { timeoutMs: args.wait_timeout * 1000, signal: ctx.signal, progress: (m) => ctx.log.progress(m) });
          if (!w.ok) return { status: 'failed', msg: `${summary}; ${w.msg}`, data: { ...data, ...writtenData(written) }, diff, changed };
        } catch (e) {
          return failure(e, ctx, written, warnings, { data, diff });
        }
      }
    }
    return { status: changed ? 'changed' : 'ok', msg: summary, data, diff };
  },
});

async function loadObjects(args: K8sApplyArgs, ctx: ModuleContext): Promise<KubeObject[]> {
  if (args.definition !== undefined) return toObjects(args.definition, 'definition');
  if (args.src !== undefined) return loadSources(ctx.findFile(args.src, 'files'), ctx.baseDir);
  const file = ctx.findFile(args.template ?? '', 'templates');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new Error(`template ${args.template ?? ''}: cannot read ${file}`);
  }
  return parseManifests(await ctx.render(text), args.template ?? file);
}

/**
 * How the apiserver refuses a manifest field the kind's schema does not declare: server-side
 * apply cannot type the object, for built-in kinds and custom resources alike, whatever
 * `fieldValidation` says (it answers 500 InternalError, which reads like a server fault).
 */
const UNDECLARED_FIELD = /failed to create typed patch object .*field not declared in schema/;

/**
 * The failed result of an apply that threw `e`. The objects `written` before it are changes of
 * the cluster all the same: the result is `changed` with them (`written`, and `resources`,
 * `objects`, `counts` of them), and its message names them. `done`: the result of the set when
 * only what came after it failed (the readiness wait).
 */
function failure(e: unknown, ctx: ModuleContext, written: readonly ObjectResult[], warnings: readonly string[], done?: { data: K8sApplyResult; diff?: DiffEntry[] }): ModuleResult<K8sApplyResult> {
  if (e instanceof Error && e.name === 'UnreachableError') throw unreachableAfter(e, writtenEntries(written));
  const data: Record<string, unknown> = { ...(done?.data ?? resultData(written)), ...writtenData(written), ...(warnings.length ? { warnings: [...warnings] } : {}) };
  const changed = written.length > 0 || (done?.data.resources.some((r) => r.action !== 'unchanged') ?? false);
  const diff = done?.diff ?? (ctx.diffMode && written.length ? written.map((r) => r.plan.diff) : undefined);
  const out = (msg: string, extra: Record<string, unknown> = {}): ModuleResult<K8sApplyResult> => ({ status: 'failed', msg: ctx.mask(`${msg}${done ? '' : writtenNote(writtenEntries(written))}`), data: { ...data, ...extra }, ...(diff ? { diff } : {}), ...(changed ? { changed } : {}) });
  if (e instanceof ApplyConflictError) return out(e.message, { conflicts: e.conflicts });
  if (e instanceof KubeApiError) {
    const hint = UNDECLARED_FIELD.test(e.message) ? ' — the manifest has a field its kind does not declare (a typo, or a field of another API version or of a newer CRD): correct the manifest; nothing of this object was written' : '';
    return out(`${e.message}${hint}`);
  }
  return out(`k8s_apply: ${errorMessage(e)}`);
}

/** The entries of `written` (see `WrittenResult`). */
function writtenEntries(written: readonly ObjectResult[]): WrittenEntry[] {
  return written.map((r) => ({ kind: r.ref.kind, apiVersion: r.ref.apiVersion, name: r.ref.name, ...(r.ref.namespace ? { namespace: r.ref.namespace } : {}), action: r.action }));
}

/** What a failed result registers of the writes made before the failure. */
function writtenData(written: readonly ObjectResult[]): { written: WrittenEntry[] } {
  return { written: writtenEntries(written) };
}

function resultData(results: readonly ObjectResult[]): K8sApplyResult {
  const counts: Record<string, number> = { created: 0, configured: 0, unchanged: 0, deleted: 0 };
  for (const r of results) counts[r.action] = (counts[r.action] ?? 0) + 1;
  return {
    resources: results.map((r) => ({ kind: r.ref.kind, apiVersion: r.ref.apiVersion, name: r.ref.name, namespace: r.ref.namespace, action: r.action, ...(r.plan.changedPaths.length ? { changed_paths: r.plan.changedPaths } : {}), ...(r.attempts ? { attempts: r.attempts } : {}) })),
    objects: results.flatMap((r) => (r.action !== 'deleted' && r.object ? [r.object] : [])),
    counts,
    drift: driftOf(results.map((r) => r.plan)),
  };
}

function summarize(results: ObjectResult[], check: boolean): string {
  const n = (a: string): number => results.filter((r) => r.action === a).length;
  const parts: string[] = [];
  const would = check ? 'would be ' : '';
  if (n('created')) parts.push(`${n('created')} ${would}created`);
  if (n('configured')) parts.push(`${n('configured')} ${would}configured`);
  if (n('deleted')) parts.push(`${n('deleted')} ${would}deleted`);
  parts.push(`${n('unchanged')} unchanged`);
  const changed = results.filter((r) => r.action !== 'unchanged').slice(0, 5).map((r) => `${r.action} ${labelOf(r.ref)}${r.plan.changedPaths.length ? ` (${r.plan.changedPaths.slice(0, 3).join(', ')})` : ''}`);
  return `${parts.join(', ')}${changed.length ? `: ${changed.join('; ')}` : ''}`;
}
