/**
 * `k8s` (kubernetes.core.k8s): create, update, patch, replace, server-side apply or delete
 * Kubernetes objects with kubernetes.core's arguments and results, over kplay's engines
 * (`applyObjects` for `apply`, dry-runs for honest `changed`, `waitFor` for `wait`).
 */
import { readFile } from 'node:fs/promises';
import { asList, buildDefinitions, defineModule, Default, errorMessage, findResource, kcoreValidate, taskPython, findSource, k8sAuthProperties, KcoreObjectFailure, kcoreDeleteOptions, kcoreWaitProperties, taskClient, loadAllDocuments, performAction, secretValues, writtenNote, StringEnum, Type, type Args, type KcoreItem, type KubeClient, type WrittenEntry, unreachableAfter, type KubeObject, type ModuleContext } from 'kplay/sdk';

const raw = (description: string): ReturnType<typeof Type.Unsafe<unknown>> => Type.Unsafe<unknown>({ type: ['object', 'array', 'string'], description });

const schema = Type.Object(
  {
    state: Default(
      StringEnum(['present', 'absent', 'patched'], {
        description: '`present`: create the object, or update it when it differs. `absent`: delete it. `patched`: patch an existing object; an absent one is left alone (with a warning).',
      }),
      'present',
    ),
    resource_definition: Type.Optional(raw('The object(s): a map, a list of maps, or YAML text (several documents allowed). Its kind, apiVersion, name and namespace win over the arguments of the same name. Aliases: `definition`, `inline`.')),
    definition: Type.Optional(raw('Alias of `resource_definition`.')),
    inline: Type.Optional(raw('Alias of `resource_definition`.')),
    src: Type.Optional(Type.String({ minLength: 1, description: 'A YAML file of object(s) (several documents allowed), relative paths found like Ansible\'s (`files/` of the role, then the role, then `files/` next to the playbook, then the playbook directory); or an http(s) URL.' })),
    template: Type.Optional(
      Type.Unsafe<unknown>({
        type: ['string', 'object', 'array'],
        description:
          'Template file(s) (found in `templates/` of the role or next to the playbook, else as given), rendered with the task\'s variables (Jinja, `trim_blocks` as Ansible), then read as YAML: a path, `{path: …}`, or a list of them. Other delimiters (`variable_start_string`, `variable_end_string`, `block_start_string`, `block_end_string`) as kubernetes.core.',
      }),
    ),
    kind: Type.Optional(Type.String({ description: 'Kind of the object, when the definition does not say (or to name an object without a definition).' })),
    name: Type.Optional(Type.String({ description: 'Name of the object, when the definition does not say.' })),
    namespace: Type.Optional(Type.String({ description: 'Namespace of the object, when the definition does not say. A namespaced object needs one (as kubernetes.core; there is no default namespace).' })),
    api_version: Default(Type.String({ description: 'API version, when the definition does not say. Aliases: `api`, `version`.' }), 'v1'),
    api: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
    version: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
    force: Default(Type.Boolean({ description: 'With `state: present`: replace (PUT) an existing object with the definition instead of patching it.' }), false),
    merge_type: Type.Optional(
      Type.Unsafe<string | string[]>({
        type: ['array', 'string'],
        items: { type: 'string', enum: ['merge', 'strategic-merge'] },
        description: 'Patch types to try in order when updating (default `[strategic-merge, merge]`: custom resources need `merge`). Not with `apply`.',
      }),
    ),
    apply: Default(Type.Boolean({ description: 'Apply the definition (fields removed from it since the last apply are removed from the object): kplay always applies server-side (server-side apply) with field manager `kplay` unless `server_side_apply` names one.' }), false),
    server_side_apply: Type.Optional(
      Type.Object(
        {
          field_manager: Type.String({ minLength: 1, description: 'Field manager of the server-side apply.' }),
          force_conflicts: Default(Type.Boolean({ description: 'Take over fields another field manager owns.' }), false),
        },
        { additionalProperties: false, description: 'With `apply: true`: the field manager (and `force_conflicts`) of the server-side apply.' },
      ),
    ),
    validate: Type.Optional(
      Type.Object(
        {
          fail_on_error: Type.Optional(Type.Boolean({ description: 'Fail (before writing) when the definition does not validate; otherwise the errors are warnings.' })),
          version: Type.Optional(Type.String({ description: 'The Kubernetes version whose schemas are used (default: the cluster\'s).' })),
          strict: Default(Type.Boolean({ description: 'Properties the schema does not know are errors.' }), true),
        },
        { additionalProperties: false, description: 'Validate each definition with the Python library kubernetes-validate on the task\'s Python interpreter (`ansible_python_interpreter`, else `python3`), as kubernetes.core does: the same messages, and the same failure when the library is missing there.' },
      ),
    ),
    append_hash: Default(Type.Boolean({ description: 'Append a hash of the content to the name of a ConfigMap or Secret (other kinds are not changed), as kubernetes.core computes it.' }), false),
    delete_options: Type.Optional(kcoreDeleteOptions),
    continue_on_error: Default(Type.Boolean({ description: 'With several objects: record an object\'s failure in its result (`error`) and go on with the others.' }), false),
    label_selectors: Type.Optional(
      Type.Unsafe<string | string[]>({
        type: ['array', 'string'],
        items: { type: 'string' },
        description: 'Label selectors: with `state: absent` and no name, delete the objects they select; with `present`, skip definitions whose labels do not match.',
      }),
    ),
    generate_name: Type.Optional(Type.String({ description: 'Create the object with a server-generated name with this prefix (`metadata.generateName`). Not with `name`.' })),
    delete_all: Default(Type.Boolean({ description: 'With `state: absent`, `kind` and no name/definition: delete every object of the kind in `namespace` (restricted by `label_selectors`). Alias: `all`.' }), false),
    all: Type.Optional(Type.Boolean({ description: 'Alias of `delete_all`.' })),
    hidden_fields: Type.Optional(Type.Array(Type.String(), { description: 'Fields left out of `result` and `diff`, e.g. `metadata.managedFields`, `spec.template.spec.containers[0].env[3].value`.' })),
    ...kcoreWaitProperties,
    ...k8sAuthProperties,
  },
  { additionalProperties: false },
);

/** Arguments of `k8s` (after defaults). */
export type K8sArgs = Args<typeof schema>;

const objectResult = Type.Record(Type.String(), Type.Unknown(), { description: 'The object as the apiserver returned it (the dry-run answer in check mode); `{}` after a deletion in check mode or when nothing was done.' });

const itemResult = Type.Object(
  {
    changed: Type.Boolean({ description: 'Whether this object changed.' }),
    result: Type.Unknown({ description: 'The object (see `result`).' }),
    method: Type.Optional(StringEnum(['create', 'update', 'replace', 'apply', 'delete'], { description: 'What was done.' })),
    diff: Type.Optional(Type.Unknown({ description: 'The change (with `--diff`).' })),
    duration: Type.Optional(Type.Integer({ description: 'Seconds waited (with `wait`).' })),
    warnings: Type.Optional(Type.Array(Type.String(), { description: 'Warnings for this object.' })),
    msg: Type.Optional(Type.String({ description: 'Why nothing was done (filtered by `label_selectors`).' })),
    error: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'With `continue_on_error`: why this object failed (`msg`, `reason`).' })),
  },
  { description: 'The result of one object.' },
);

const result = Type.Object({
  result: Type.Union([objectResult, Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The objects deleted by `label_selectors`.' }), Type.Object({ results: Type.Array(itemResult, { description: 'One result per object.' }) }, { description: 'With several objects: `{results: [...]}`.' })], {
    description: 'One object: the object as the apiserver returned it. Several: `{results: [{changed, result, method, …}, …]}`.',
  }),
  method: Type.Optional(StringEnum(['create', 'update', 'replace', 'apply', 'delete'], { description: 'One object: what was done (`create`, `update` (a patch), `replace`, `apply`, `delete`).' })),
  duration: Type.Optional(Type.Integer({ description: 'One object with `wait`: seconds waited.' })),
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'One object: the apiserver\'s warnings (deprecations) and why nothing was done.' })),
  error: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'One object with `continue_on_error`: why it failed (`msg`, `reason`); the task is then ok, as kubernetes.core.' })),
});


export default defineModule({
  name: 'k8s',
  summary: 'kubernetes.core.k8s: create, patch, replace, apply or delete Kubernetes objects (kubernetes.core arguments and results)',
  description: `kubernetes.core's \`k8s\` module on kplay's Kubernetes engine: the same arguments (aliases included), connection settings (\`kubeconfig\`, \`context\`, \`host\`, \`api_key\`, … and \`K8S_AUTH_*\`) and registered results (\`result\`, \`method\`, \`duration\`, \`warnings\`; \`result.results\` with several objects), so playbooks written for Ansible run unchanged.

- \`state: present\`: an absent object is created (POST); an existing one is patched (strategic merge, then JSON merge for custom resources, or \`merge_type\`), replaced (\`force: true\`) or applied (\`apply: true\`, always server-side apply: kplay's \`k8s_apply\` engine, field manager \`server_side_apply.field_manager\` or \`kplay\`).
- Every write is tried first as a server-side dry-run: when the object would not change, nothing is written and the task is \`ok\` (kplay's \`changed\` is honest). In check mode only the dry-run is sent.
- \`state: absent\` deletes (\`delete_options\`), by name or by \`label_selectors\`; \`delete_all\` deletes every object of a kind.
- \`wait\`: Deployments, DaemonSets, StatefulSets and Pods until ready, \`wait_condition\` (type/status/reason) for any kind, deletion for \`state: absent\`; by watching, not polling (\`wait_sleep\` is accepted).
- Secret values in results are registered as secrets: usable in later tasks, masked in all output.
- A failure after writes (the second of three definitions refused, a wait that timed out after a create) is \`changed\` and registers \`written\` (kind, name, namespace, action of each object written), named in the message too; kubernetes.core reports only the failing definition's own change. With \`continue_on_error\`, a definition that wrote before failing counts as changed.`,
  usesCluster: true,
  declaresState: true,
  checkMode: 'supported',
  diffMode: 'supported',
  schema,
  result,
  examples: [
    { title: 'Create a namespace', yaml: '- kubernetes.core.k8s:\n    name: testing\n    api_version: v1\n    kind: Namespace\n    state: present' },
    {
      title: 'Create or update a Service from an inline definition',
      yaml: '- kubernetes.core.k8s:\n    state: present\n    definition:\n      apiVersion: v1\n      kind: Service\n      metadata: { name: web, namespace: testing }\n      spec:\n        selector: { app: web }\n        ports: [{ port: 8000, targetPort: 8000 }]',
    },
    { title: 'Apply a file of objects server-side and wait for them', yaml: '- kubernetes.core.k8s:\n    src: deployment.yml\n    apply: true\n    server_side_apply:\n      field_manager: ansible\n    wait: true' },
    { title: 'Patch a label onto an existing namespace', yaml: '- kubernetes.core.k8s:\n    state: patched\n    kind: Namespace\n    name: testing\n    definition:\n      metadata:\n        labels: { support: patch }' },
    { title: 'Delete a Service', yaml: '- kubernetes.core.k8s:\n    state: absent\n    api_version: v1\n    kind: Service\n    namespace: testing\n    name: web' },
  ],
  async run(args, ctx) {
    const definitionArg = args.resource_definition ?? args.definition ?? args.inline;
    // kubernetes.core's action renders `template` first (its errors come first), into the definition;
    // `template` stays an argument only beside a given definition, then the module checks its exclusions
    let templated: unknown[] | undefined;
    if (args.template !== undefined) {
      try {
        templated = await templateDocuments(args.template, ctx);
      } catch (e) {
        if (e instanceof Error && e.name === 'UnreachableError') throw e;
        return { status: 'failed', msg: ctx.mask(`Failed to load resource definition: ${errorMessage(e)}`) };
      }
    }
    const definitionGiven = definitionArg !== undefined || templated !== undefined;
    const templateKept = templated !== undefined && definitionArg !== undefined;
    const exclusive: [string, boolean, boolean][] = [
      ['resource_definition|src', definitionGiven, args.src !== undefined],
      ['merge_type|apply', args.merge_type !== undefined, args.apply],
      ['template|resource_definition', templateKept, definitionGiven],
      ['template|src', templateKept, args.src !== undefined],
      ['name|generate_name', args.name !== undefined, args.generate_name !== undefined],
    ];
    const both = exclusive.find(([, a, b]) => a && b);
    if (both) return { status: 'failed', msg: `parameters are mutually exclusive: ${both[0]}` };
    const mergeTypes = asList(args.merge_type);
    const badMerge = mergeTypes.find((m) => m !== 'merge' && m !== 'strategic-merge');
    if (badMerge !== undefined) return { status: 'failed', msg: `value of merge_type must be one or more of: merge, strategic-merge. Got no match for: ${badMerge}` };

    let defs: Record<string, unknown>[];
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    try {
      const docs = templated ?? (await sourceDocuments(args, definitionArg, ctx));
      const params = { kind: args.kind, apiVersion: args.version ?? args.api ?? args.api_version, name: args.name, namespace: args.namespace, generateName: args.generate_name };
      defs = buildDefinitions(docs, params);
      const deleteAll = args.delete_all || args.all === true;
      if (deleteAll && args.state === 'absent' && args.name === undefined && definitionArg === undefined && args.src === undefined) {
        if (args.kind === undefined) return { status: 'failed', msg: "'kind' option is required to specify the resource type." };
        defs = await everyObject(client, params.apiVersion, args.kind, args.namespace, asList(args.label_selectors), ctx.signal);
      }
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(`Failed to load resource definition: ${errorMessage(e)}`) };
    }
    for (const d of defs) for (const v of secretValues(d as unknown as KubeObject)) ctx.addSecret(v);

    const items: KcoreItem[] = [];
    // What the definitions before a failure wrote (and the failing one, when it wrote before failing):
    // changes all the same, reported with the failure (kubernetes.core forgets the earlier ones).
    const written: WrittenEntry[] = [];
    for (const def of defs) {
      // kubernetes.core validates each definition just before its action; a validation failure ends the task
      let checked: string[] = [];
      if (args.validate) {
        const v = await kcoreValidate(def, { python: taskPython(ctx.vars), version: args.validate.version, strict: args.validate.strict, serverVersion: client.serverVersion, signal: ctx.signal });
        const stop = v.fatal ?? (v.errors.length && args.validate.fail_on_error ? v.errors.join('\n') : undefined);
        if (stop !== undefined) return { status: 'failed', msg: ctx.mask(`${stop}${writtenNote(written)}`), ...(written.length ? { data: { changed: true, written }, changed: true } : {}) };
        checked = [...v.warnings, ...v.errors];
      }
      try {
        const item = await performAction(client, def, args, mergeTypes, ctx);
        if (checked.length) item.warnings = [...(item.warnings ?? []), ...checked];
        items.push(item);
        if (item.changed && !ctx.checkMode) written.push(...writtenOf(def, item));
      } catch (e) {
        if (e instanceof Error && e.name === 'UnreachableError') throw unreachableAfter(e, written);
        const extra: Record<string, unknown> = e instanceof KcoreObjectFailure ? e.extra : {};
        const own = extra.changed === true && !ctx.checkMode ? writtenOf(def, { changed: true, result: isRecordish(extra.result), method: methodOf(extra.method) }) : [];
        written.push(...own);
        const error = { ...extra, msg: ctx.mask(e instanceof KcoreObjectFailure ? e.message : errorMessage(e)), ...(checked.length ? { warnings: checked } : {}) };
        if (!args.continue_on_error) {
          const { msg, ...data } = error;
          // a write made before the failure (an earlier definition, a wait that timed out after a create) is a change
          const changed = extra.changed === true || written.length > 0;
          // `written` only when something was: a failure that wrote nothing registers what kubernetes.core registers
          return { status: 'failed', msg: ctx.mask(`${String(msg)}${writtenNote(written)}`), data: { ...data, ...(changed ? { changed } : {}), ...(written.length ? { written } : {}) }, changed };
        }
        items.push({ changed: own.length > 0, result: {}, error });
      }
    }
    const changed = items.some((i) => i.changed);
    const diff = ctx.diffMode ? items.flatMap((i) => (i.changed && i.diff ? [i.diff] : [])) : undefined;
    const warnings = items.flatMap((i) => i.warnings ?? []);
    for (const w of warnings) ctx.log.warn(w);
    const failedItems = items.filter((i) => i.error);
    if (items.length === 1 && items[0]) {
      const { diff: _d, kdiff, msg, changed: _c, ...rest } = items[0];
      // kubernetes.core registers a diff (with --diff) for every method but create and delete: `{before, after}` of what differs
      const data = ctx.diffMode && kdiff ? { ...rest, diff: kdiff } : rest;
      // kubernetes.core's own message (a definition filtered by label_selectors) is registered as `msg`; kplay's summary is not
      const registerMsg = msg !== undefined;
      return changed ? { status: 'changed', registerMsg, msg: msg ?? summary(items, ctx.checkMode), data, diff, registerDiff: false } : { status: 'ok', registerMsg, msg: msg ?? summary(items, ctx.checkMode), data, diff, registerDiff: false };
    }
    const results = items.map(({ diff: _d, kdiff, ...rest }) => (ctx.diffMode && kdiff ? { ...rest, diff: kdiff } : rest));
    const msg = `${summary(items, ctx.checkMode)}${failedItems.length ? `; ${failedItems.length} failed (continue_on_error)` : ''}`;
    return changed ? { status: 'changed', registerMsg: false, msg, data: { result: { results } }, diff, registerDiff: false } : { status: 'ok', registerMsg: false, msg, data: { result: { results } }, diff, registerDiff: false };
  },
});

const DONE: Record<NonNullable<KcoreItem['method']>, string> = { create: 'created', update: 'patched', replace: 'replaced', apply: 'applied', delete: 'deleted' };

/** `m` when it names a method of {@link KcoreItem}. */
function methodOf(m: unknown): KcoreItem['method'] {
  return typeof m === 'string' && m in DONE ? (m as KcoreItem['method']) : undefined;
}

/** `v` when it is an object or a list of objects (a result), else `{}`. */
function isRecordish(v: unknown): KcoreItem['result'] {
  if (Array.isArray(v)) return v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x));
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
}

/** The objects definition `def` wrote, as its `item` says (see `WrittenResult`). */
function writtenOf(def: Record<string, unknown>, item: KcoreItem): WrittenEntry[] {
  const action = DONE[item.method ?? 'update'];
  const md = (o: Record<string, unknown>): Record<string, unknown> => (typeof o.metadata === 'object' && o.metadata !== null ? (o.metadata as Record<string, unknown>) : {});
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  const entry = (o: Record<string, unknown>): WrittenEntry => {
    const namespace = str(md(o).namespace) ?? str(md(def).namespace);
    return { kind: str(o.kind) ?? String(def.kind), apiVersion: str(o.apiVersion) ?? String(def.apiVersion), name: str(md(o).name) ?? str(md(def).name) ?? '', ...(namespace ? { namespace } : {}), action };
  };
  const shown = Array.isArray(item.result) ? item.result : [item.result];
  return shown.length ? shown.map(entry) : [entry(def)];
}

function summary(items: KcoreItem[], check: boolean): string {
  if (items.length === 0) return 'no objects';
  const counts = new Map<string, number>();
  for (const i of items) {
    const what = i.error ? 'failed' : !i.changed ? 'unchanged' : `${check ? 'would be ' : ''}${DONE[i.method ?? 'update']}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

/** The documents of `template`: each template rendered, then read as YAML. */
async function templateDocuments(template: unknown, ctx: ModuleContext): Promise<unknown[]> {
  const docs: unknown[] = [];
  for (const t of Array.isArray(template) ? (template as unknown[]) : [template]) docs.push(...(await renderTemplate(t, ctx)));
  return docs;
}

/** The documents of `resource_definition` or `src` (undefined: none given). */
async function sourceDocuments(args: K8sArgs, definitionArg: unknown, ctx: ModuleContext): Promise<unknown[] | undefined> {
  if (definitionArg !== undefined && definitionArg !== null && definitionArg !== '') {
    if (typeof definitionArg === 'string') return loadAllDocuments(definitionArg, 'resource_definition');
    if (Array.isArray(definitionArg)) return (definitionArg as unknown[]).flatMap((d) => (typeof d === 'string' ? loadAllDocuments(d, 'resource_definition') : d === null ? [] : [d]));
    return [definitionArg];
  }
  if (args.src !== undefined) {
    if (/^(https?|ftp):\/\//.test(args.src)) {
      if (args.src.startsWith('ftp:')) throw new Error(`src ${args.src}: ftp is not supported by kplay; use http(s) or a local file`);
      const res = await fetch(args.src, { signal: ctx.signal });
      if (!res.ok) throw new Error(`src ${args.src}: HTTP ${res.status} ${res.statusText}`);
      return loadAllDocuments(await res.text(), args.src);
    }
    const file = findSource(ctx, args.src, 'files');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new Error(`could not read src ${args.src} (${file}): ${errorMessage(e)}`, { cause: e });
    }
    return loadAllDocuments(text, args.src);
  }
  return undefined;
}

const TEMPLATE_KEYS = new Set(['path', 'newline_sequence', 'trim_blocks', 'lstrip_blocks', 'variable_start_string', 'variable_end_string', 'block_start_string', 'block_end_string']);

async function renderTemplate(t: unknown, ctx: ModuleContext): Promise<unknown[]> {
  let rel: string;
  const delimiters = { variableStart: '{{', variableEnd: '}}', blockStart: '{%', blockEnd: '%}', commentStart: '{#', commentEnd: '#}' };
  let custom = false;
  if (typeof t === 'string') rel = t;
  else if (t !== null && typeof t === 'object' && !Array.isArray(t)) {
    const o = t as Record<string, unknown>;
    if (typeof o.path !== 'string' || !o.path) throw new Error('Please specify path for template.');
    const unknown = Object.keys(o).filter((k) => !TEMPLATE_KEYS.has(k));
    if (unknown.length) throw new Error(`template: unknown key(s) ${unknown.join(', ')}; valid: ${[...TEMPLATE_KEYS].join(', ')}`);
    // other delimiters, as kubernetes.core's action sets them on its templar (null: Jinja's)
    for (const [key, field] of DELIMITER_KEYS) {
      const v = o[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string' || v === '') throw new Error(`template ${o.path}: ${key} must be a non-empty string, got ${JSON.stringify(v)}`);
      if (v !== delimiters[field]) custom = true;
      delimiters[field] = v;
    }
    const defaults: Record<string, unknown> = { trim_blocks: true, lstrip_blocks: false, newline_sequence: '\n' };
    const unsupported = Object.keys(defaults).filter((k) => o[k] !== undefined && o[k] !== null && String(o[k]) !== String(defaults[k]) && !(k === 'newline_sequence' && o[k] === '\\n'));
    if (unsupported.length) throw new Error(`template ${o.path}: ${unsupported.join(', ')} other than the defaults are not supported by kplay (templates use trim_blocks, no lstrip_blocks and \\n line ends); rewrite the template without them`);
    rel = o.path;
  } else throw new Error(`Error while reading template file - a string or dict for template expected, but got ${Array.isArray(t) ? 'list' : typeof t} instead`);
  const file = findSource(ctx, rel, 'templates');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new Error(`could not find template=${rel}, ${file} does not exist`);
  }
  const rendered = await ctx.render(text, { template_path: rel, template_fullpath: file, template_host: '', template_uid: '', template_run_date: new Date().toISOString(), template_destpath: null }, custom ? { delimiters } : undefined);
  return loadAllDocuments(rendered, rel);
}

/** A template's delimiter options and the delimiter each sets. */
const DELIMITER_KEYS: readonly (readonly [string, 'variableStart' | 'variableEnd' | 'blockStart' | 'blockEnd'])[] = [
  ['variable_start_string', 'variableStart'],
  ['variable_end_string', 'variableEnd'],
  ['block_start_string', 'blockStart'],
  ['block_end_string', 'blockEnd'],
];

/** Every object of a kind (in a namespace, matching selectors), as definitions (`delete_all`). */
async function everyObject(client: KubeClient, apiVersion: string, kind: string, namespace: string | undefined, selectors: string[], signal: AbortSignal): Promise<Record<string, unknown>[]> {
  const info = await findResource(client, apiVersion, kind);
  if (!info) throw new Error(`Failed to find exact match for ${apiVersion}.${kind} by [kind, name, singularName, shortNames]`);
  const list = await client.list(apiVersion, info.kind, { namespace: info.namespaced ? namespace : undefined, labelSelector: selectors.length ? selectors.join(',') : undefined, signal });
  return list.items.map((o) => ({ ...o, apiVersion, kind: info.kind }) as Record<string, unknown>);
}

