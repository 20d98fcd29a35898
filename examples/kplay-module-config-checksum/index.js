// @ts-check
/**
 * `config_checksum`: roll a workload when the configuration it reads changes. Computes a SHA-256
 * over the data of the named ConfigMaps and Secrets (Secret values never leave this function) and
 * sets it as the pod-template annotation `checksum/config` of a Deployment, StatefulSet or
 * DaemonSet, with server-side apply under its own field manager: a changed checksum rolls the
 * workload, an unchanged one changes nothing (idempotent, check mode supported).
 *
 * A community module: one file, importing only the public SDK (`kplay/sdk`).
 */
import { createHash } from 'node:crypto';
import { defineModule, kubeFor, errorMessage, KubeApiError } from 'kplay/sdk';

/** @typedef {{ kind?: 'Deployment' | 'StatefulSet' | 'DaemonSet', name: string, namespace?: string, configmaps?: string[], secrets?: string[], annotation?: string }} Args */

const FIELD_MANAGER = 'kplay-config-checksum';

export default defineModule(
  /** @type {import('kplay/sdk').ModuleDefinition<Args>} */ ({
    name: 'config_checksum',
    summary: 'Roll a workload when the ConfigMaps/Secrets it reads change (checksum annotation)',
    description:
      'Computes a SHA-256 over the data of `configmaps` and `secrets` (in the workload\'s namespace) and sets it as the pod-template annotation `annotation` of the workload with server-side apply (field manager `kplay-config-checksum`). Changed checksum: the workload rolls (`changed`); same checksum: `ok`. Registered data: `checksum`, `previous`.',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        kind: { type: 'string', enum: ['Deployment', 'StatefulSet', 'DaemonSet'], default: 'Deployment', description: 'Kind of the workload.' },
        name: { type: 'string', minLength: 1, description: 'Name of the workload.' },
        namespace: { type: 'string', default: 'default', description: 'Namespace of the workload and of its ConfigMaps and Secrets.' },
        configmaps: { type: 'array', items: { type: 'string' }, default: [], description: 'ConfigMaps whose data goes into the checksum.' },
        secrets: { type: 'array', items: { type: 'string' }, default: [], description: 'Secrets whose data goes into the checksum (values are hashed, never shown).' },
        annotation: { type: 'string', default: 'checksum/config', description: 'Pod-template annotation that holds the checksum.' },
      },
    },
    checkMode: 'supported',
    usesCluster: true,
    examples: [{ title: 'Roll web when its settings change', yaml: '- config_checksum:\n    name: web\n    namespace: shop\n    configmaps: [web-settings]\n    secrets: [web-credentials]' }],
    async run(args, ctx) {
      const kind = args.kind ?? 'Deployment';
      const ns = args.namespace ?? 'default';
      const annotation = args.annotation ?? 'checksum/config';
      const client = await kubeFor(ctx);
      const hash = createHash('sha256');
      try {
        for (const [k, names] of /** @type {const} */ ([['ConfigMap', args.configmaps ?? []], ['Secret', args.secrets ?? []]])) {
          for (const name of names) {
            const obj = await client.get({ apiVersion: 'v1', kind: k, name, namespace: ns }, ctx.signal);
            if (!obj) return { status: 'failed', msg: `config_checksum: ${k} ${ns}/${name} does not exist` };
            const data = { data: obj.data ?? {}, binaryData: obj.binaryData ?? {} };
            hash.update(`${k}/${name}\u0000${JSON.stringify(data, Object.keys(data).sort())}\u0000${JSON.stringify(Object.entries(/** @type {Record<string, unknown>} */ (obj.data ?? {})).sort())}\u0000`);
          }
        }
        const checksum = hash.digest('hex');
        const ref = { apiVersion: 'apps/v1', kind, name: args.name, namespace: ns };
        const live = await client.get(ref, ctx.signal);
        if (!live) return { status: 'failed', msg: `config_checksum: ${kind} ${ns}/${args.name} does not exist` };
        const spec = /** @type {{ template?: { metadata?: { annotations?: Record<string, string> } } } | undefined} */ (live.spec);
        const previous = spec?.template?.metadata?.annotations?.[annotation] ?? '';
        const data = { checksum, previous };
        if (previous === checksum) return { status: 'ok', msg: `${kind} ${ns}/${args.name}: configuration unchanged`, data };
        const diff = [{ label: `${kind} ${ns}/${args.name}`, before: `${annotation}: ${previous || '(none)'}\n`, after: `${annotation}: ${checksum}\n` }];
        if (ctx.checkMode) return { status: 'changed', msg: `${kind} ${ns}/${args.name}: configuration changed, would roll`, data, diff };
        await client.apply(
          { apiVersion: 'apps/v1', kind, metadata: { name: args.name, namespace: ns }, spec: { template: { metadata: { annotations: { [annotation]: checksum } } } } },
          { fieldManager: FIELD_MANAGER, signal: ctx.signal },
        );
        return { status: 'changed', msg: `${kind} ${ns}/${args.name}: configuration changed, rolling`, data, diff };
      } catch (e) {
        if (e instanceof KubeApiError) return { status: 'failed', msg: ctx.mask(e.message) };
        return { status: 'failed', msg: ctx.mask(`config_checksum: ${errorMessage(e)}`) };
      }
    },
  }),
);
