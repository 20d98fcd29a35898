/**
 * `config_checksum`: roll a workload when the configuration it reads changes. Computes a SHA-256
 * over the data of the named ConfigMaps and Secrets (Secret values never leave this function) and
 * sets it as the pod-template annotation `checksum/config` of a Deployment, StatefulSet or
 * DaemonSet, with server-side apply under its own field manager: a changed checksum rolls the
 * workload, an unchanged one changes nothing (idempotent, check mode supported).
 *
 * A community module: one TypeScript file, importing only the public SDK (`kplay/sdk`); kplay
 * compiles it when it loads it. Arguments and result are declared once, with the SDK's `Type`.
 */
import { createHash } from 'node:crypto';
import { defineModule, kubeFor, errorMessage, KubeApiError, Default, StringEnum, Type, type Args } from 'kplay/sdk';

const FIELD_MANAGER = 'kplay-config-checksum';

export const schema = Type.Object(
  {
    kind: Default(StringEnum(['Deployment', 'StatefulSet', 'DaemonSet'], { description: 'Kind of the workload.' }), 'Deployment'),
    name: Type.String({ minLength: 1, description: 'Name of the workload.' }),
    namespace: Default(Type.String({ minLength: 1, description: 'Namespace of the workload and of its ConfigMaps and Secrets.' }), 'default'),
    configmaps: Default(Type.Array(Type.String({ minLength: 1 }), { description: 'ConfigMaps whose data goes into the checksum.' }), []),
    secrets: Default(Type.Array(Type.String({ minLength: 1 }), { description: 'Secrets whose data goes into the checksum (values are hashed, never shown).' }), []),
    annotation: Default(Type.String({ minLength: 1, description: 'Pod-template annotation that holds the checksum.' }), 'checksum/config'),
  },
  { additionalProperties: false },
);

/** Arguments of `config_checksum`, after defaults. */
export type ConfigChecksumArgs = Args<typeof schema>;

/** SHA-256 over the data of the given ConfigMaps and Secrets (in that order), as kplay stores it. */
export function configChecksum(sources: { kind: string; name: string; data: Record<string, unknown>; binaryData: Record<string, unknown> }[]): string {
  const hash = createHash('sha256');
  for (const s of sources) {
    const data = { data: s.data, binaryData: s.binaryData };
    hash.update(`${s.kind}/${s.name}\u0000${JSON.stringify(data, Object.keys(data).sort())}\u0000${JSON.stringify(Object.entries(s.data).sort())}\u0000`);
  }
  return hash.digest('hex');
}

export default defineModule({
  name: 'config_checksum',
  summary: 'Roll a workload when the ConfigMaps/Secrets it reads change (checksum annotation)',
  description:
    "Computes a SHA-256 over the data of `configmaps` and `secrets` (in the workload's namespace) and sets it as the pod-template annotation `annotation` of the workload with server-side apply (field manager `kplay-config-checksum`). Changed checksum: the workload rolls (`changed`); same checksum: `ok`.",
  schema,
  result: Type.Object({
    checksum: Type.String({ description: 'The SHA-256 of the configuration now.' }),
    previous: Type.String({ description: 'The checksum the workload had (empty when none).' }),
  }),
  checkMode: 'supported',
  diffMode: 'supported',
  usesCluster: true,
  examples: [{ title: 'Roll web when its settings change', yaml: '- config_checksum:\n    name: web\n    namespace: shop\n    configmaps: [web-settings]\n    secrets: [web-credentials]' }],
  async run(args, ctx) {
    const { kind, namespace: ns, annotation } = args;
    const client = await kubeFor(ctx);
    try {
      const sources = [];
      for (const [k, names] of [['ConfigMap', args.configmaps], ['Secret', args.secrets]] as const) {
        for (const name of names) {
          const obj = await client.get({ apiVersion: 'v1', kind: k, name, namespace: ns }, ctx.signal);
          if (!obj) return { status: 'failed', msg: `config_checksum: ${k} ${ns}/${name} does not exist` };
          sources.push({ kind: k, name, data: (obj.data ?? {}) as Record<string, unknown>, binaryData: (obj.binaryData ?? {}) as Record<string, unknown> });
        }
      }
      const checksum = configChecksum(sources);
      const ref = { apiVersion: 'apps/v1', kind, name: args.name, namespace: ns };
      const live = await client.get(ref, ctx.signal);
      if (!live) return { status: 'failed', msg: `config_checksum: ${kind} ${ns}/${args.name} does not exist` };
      const spec = live.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined;
      const previous = spec?.template?.metadata?.annotations?.[annotation] ?? '';
      const data = { checksum, previous };
      if (previous === checksum) return { status: 'ok', msg: `${kind} ${ns}/${args.name}: configuration unchanged`, data };
      const diff = ctx.diffMode ? [{ label: `${kind} ${ns}/${args.name}`, before: `${annotation}: ${previous || '(none)'}\n`, after: `${annotation}: ${checksum}\n` }] : undefined;
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
});
