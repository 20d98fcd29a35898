/**
 * `lb_switch`: take a backend server out of (or back into) a load balancer's rotation.
 * The `provider:` selects the load balancer; each provider is one file in `src/lb/`.
 */
import { defineModule, UnreachableError, errorMessage, PROVIDERS, Type, type JsonSchema, type ModuleResult, type LbSwitchArgs, type Static, type TSchema } from 'kplay/sdk';

/** A TypeBox property declaration as the plain JSON Schema it is. */
const json = (s: TSchema): JsonSchema => ({ ...s });

/**
 * Flat schema: every provider's properties (without defaults), plus per provider, via
 * `if`/`then`: its required keys, its narrowed types and its defaults (ajv fills a default in
 * only when that provider is selected, so no provider receives another provider's arguments).
 */
function buildSchema(): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    provider: {
      type: 'string',
      enum: PROVIDERS.map((p) => p.name),
      description: `Load balancer kind. ${PROVIDERS.map((p) => `\`${p.name}\`: ${p.summary}`).join(' ')}`,
    },
  };
  const defaultsNote = new Map<string, string[]>();
  const branches: JsonSchema[] = [];
  for (const p of PROVIDERS) {
    const then: Record<string, JsonSchema | boolean> = {};
    for (const [k, v] of Object.entries(p.schema.properties)) {
      if (k === 'provider') continue;
      const { default: def, ...decl } = json(v);
      const prev = properties[k];
      if (prev !== undefined && JSON.stringify(prev) !== JSON.stringify(decl)) {
        throw new Error(`lb_switch: provider ${p.name} redefines argument '${k}' differently`);
      }
      properties[k] = decl;
      if (def !== undefined) {
        then[k] = { default: def };
        defaultsNote.set(k, [...(defaultsNote.get(k) ?? []), `\`${JSON.stringify(def)}\` (${p.name})`]);
      }
    }
    const required = (p.schema.required ?? []).filter((k) => k !== 'provider');
    // `properties` restates the required keys (as `true`) so ajv's strictRequired sees them defined here.
    for (const k of required) then[k] ??= true;
    for (const [k, v] of Object.entries(p.narrow ?? {})) then[k] = { ...(typeof then[k] === 'object' ? then[k] : {}), ...v };
    branches.push({ if: { properties: { provider: { const: p.name } }, required: ['provider'] }, then: { properties: then, required } });
  }
  for (const [k, notes] of defaultsNote) {
    const prop = properties[k];
    if (prop) properties[k] = { ...prop, description: `${String(prop.description ?? '')} Default: ${notes.join(', ')}.` };
  }
  return { type: 'object', additionalProperties: false, required: ['provider'], properties, allOf: branches };
}

const Any = (description: string) => Type.Optional(Type.Unknown({ description }));

/** What `lb_switch` registers: the keys of the selected provider. */
const result = Type.Object(
  {
    provider: Type.String({ description: 'The provider that switched.' }),
    target: Type.Optional(Type.String({ description: 'What was switched: `backend/server @ socket` (haproxy), `namespace/name` (Kubernetes providers).' })),
    cluster: Type.Optional(Type.String({ description: '(Kubernetes providers) The cluster the object lives on.' })),
    backend: Type.Optional(Type.String({ description: '(haproxy, httproute) The backend / backendRef name.' })),
    server: Type.Optional(Type.String({ description: '(haproxy) The server name.' })),
    state: Type.Optional(Type.String({ description: '(haproxy) The wanted state.' })),
    weight: Any('The wanted weight (haproxy: as given; ingress_canary, httproute: the integer set).'),
    socket: Type.Optional(Type.String({ description: '(haproxy, one socket) The runtime API socket.' })),
    previous: Any('(haproxy, one socket) `admin_state`, `operational_state`, `weight` before the switch.'),
    current: Any('(haproxy, one socket) The same after the switch (predicted in check mode).'),
    drain: Any('(haproxy, `wait_drained`) `sessions_at_start`, `waited_ms`.'),
    instances: Any('(haproxy) One entry per socket: `socket`, `target`, `changed`, `previous`, `current`, `drain`.'),
    previous_selector: Any('(k8s_service) The Service selector before.'),
    selector: Any('(k8s_service) The selector after (predicted in check mode).'),
    previous_drained: Type.Optional(Type.Boolean({ description: '(k8s_service) Whether the Service was drained before.' })),
    drained: Type.Optional(Type.Boolean({ description: '(k8s_service) Whether it is drained after.' })),
    endpoints_before: Type.Optional(Type.Integer({ description: '(k8s_service) Ready endpoints in the EndpointSlices before.' })),
    endpoints_after: Type.Optional(Type.Integer({ description: '(k8s_service) Ready endpoints after (predicted from the matching pods in check mode).' })),
    ready_pods: Type.Optional(Type.Integer({ description: '(k8s_service) Ready pods the new selector matches.' })),
    resource_version: Type.Optional(Type.String({ description: '(Kubernetes providers) resourceVersion of the object after the task.' })),
    previous_weight: Any('(ingress_canary, httproute) The weight before (`null` when unset; a list when rules differed).'),
    weight_total: Type.Optional(Type.Integer({ description: '(ingress_canary) The total the weight is relative to.' })),
    previous_canary: Type.Optional(Type.Boolean({ description: '(ingress_canary) Whether the Ingress was a canary before.' })),
    canary: Type.Optional(Type.Boolean({ description: '(ingress_canary) Always true after the task.' })),
    rules: Any('(httproute) Per rule changed: `rule`, `backend_ref`, `previous_weight`, `weight`, `traffic_percent`.'),
  },
  { additionalProperties: false },
);

/** What `lb_switch` registers. */
type LbSwitchResult = Static<typeof result>;

export default defineModule({
  name: 'lb_switch',
  summary:
    'Switch traffic: drain/enable a server in HAProxy, flip a Kubernetes Service blue/green or drain its endpoints, set ingress-nginx canary or HTTPRoute weights',
  description: [
    'Moves traffic idempotently: the current state is read first and nothing is written when it already matches',
    '(status `ok`; a second identical run is always `ok` and writes nothing). **Check mode** only reads (Kubernetes',
    'providers also send the write as a server-side dry run, so it is validated) and reports what would change;',
    '`--diff` shows the state before and after. `provider:` selects the kind of load balancer; every argument is',
    'marked with the providers it belongs to, and passing another provider\'s argument fails.',
    '',
    '**haproxy**: sets the administrative state (`ready`, `drain`, `maint`) and optionally the weight of one server',
    'through the runtime API (`stats socket … level admin`) over a unix socket or TCP, then reads it back. With',
    '`sockets`, several HAProxy instances are switched together, all-or-nothing: every instance is read first, and if',
    'switching one fails, the ones already switched are reverted. `wait_drained` polls `show stat` every 200 ms until',
    "the server's current sessions reach 0 (HAProxy has no push API), failing after `drain_timeout` seconds. The result",
    'has `target` (`backend/server @ socket`), `previous` and `current` (`admin_state`, `operational_state`,',
    '`weight`), `drain` (`sessions_at_start`, `waited_ms`) and `instances` (one entry per socket).',
    '',
    "**k8s_service** (on the task's cluster): edits a Service's selector. `selector:` merges keys into it (blue/green:",
    '`{color: green}`; other keys are kept, `null` removes a key) and is refused, with nothing changed, when the new',
    'selector matches fewer than `min_ready` (default 1) ready pods. `state: drain` takes this cluster out of the',
    "Service's rotation without touching any pod: it adds `drain_label` (default `kplay.dev/drained: \"true\"`) to the",
    'selector, which no pod carries, so the Service has no endpoints; `state: ready` removes it and restores the',
    "previous selection. After a change it waits (`endpoints_timeout`, default 30 s) until the Service's",
    'EndpointSlices list exactly the pods the new selector matches. Result: `target` (`namespace/service`),',
    '`previous_selector`, `selector`, `previous_drained`, `drained`, `endpoints_before`, `endpoints_after` (ready',
    'endpoints in the EndpointSlices; predicted from the matching pods in check mode), `ready_pods`, `resource_version`.',
    '',
    '**ingress_canary**: sets `nginx.ingress.kubernetes.io/canary: "true"` and `canary-weight: "<weight>"` on the',
    'canary Ingress (refused when it is not a canary yet and no main Ingress serves the same host). Result:',
    '`previous_weight` (`null` when unset), `weight`, `weight_total`, `previous_canary`.',
    '',
    '**httproute**: sets the `weight` of the backendRef named `backend` in a Gateway API HTTPRoute, in `rule` or in',
    'every rule that references it (a backendRef without `weight` counts as 1). An unknown backend fails and lists',
    'the known backendRefs. Result: `previous_weight`, `weight`, `rules` (`rule`, `previous_weight`, `weight`,',
    '`traffic_percent` of the rule after the change).',
    '',
    'The Kubernetes providers write a JSON merge patch guarded by the `resourceVersion` they read (recorded under the',
    'field manager `kplay`): only the named keys change and a concurrent edit is re-read, never overwritten. A',
    'missing Service / Ingress / HTTPRoute fails naming it, its namespace and the cluster.',
  ].join('\n'),
  schema: Type.Unsafe<LbSwitchArgs>(buildSchema()),
  result,
  checkMode: 'supported',
  diffMode: 'supported',
  usesCluster: true,
  examples: [
    {
      title: 'Drain a server and wait for its sessions to end before upgrading it',
      yaml: [
        '- name: take web1 out of rotation',
        '  lb_switch:',
        '    provider: haproxy',
        '    socket: /run/haproxy/admin.sock',
        '    backend: be_web',
        '    server: web1',
        '    state: drain',
        '    wait_drained: true',
        '    drain_timeout: 120',
      ].join('\n'),
    },
    {
      title: 'Put it back on two HAProxy instances at half weight, all-or-nothing',
      yaml: [
        '- lb_switch:',
        '    provider: haproxy',
        '    sockets:',
        '      - tcp://10.0.0.11:9999',
        '      - tcp://10.0.0.12:9999',
        '    backend: be_web',
        '    server: web1',
        '    state: ready',
        '    weight: "50%"',
      ].join('\n'),
    },
    {
      title: 'Blue/green: point the Service at the green pods (refused if no green pod is ready)',
      yaml: [
        '- name: switch shop/web to green',
        '  lb_switch:',
        '    provider: k8s_service',
        '    namespace: shop',
        '    service: web',
        '    selector:',
        '      color: green',
        '    min_ready: 3',
      ].join('\n'),
    },
    {
      title: "Take one cluster out of the Service's rotation for maintenance, then put it back",
      yaml: [
        '- name: drain eu-1 (the Service keeps its selector plus kplay.dev/drained=true, so it has no endpoints)',
        '  lb_switch:',
        '    provider: k8s_service',
        '    namespace: shop',
        '    service: web',
        '    state: drain',
        '  when: cluster_name == "eu-1"',
        '',
        '- name: back in rotation',
        '  lb_switch:',
        '    provider: k8s_service',
        '    namespace: shop',
        '    service: web',
        '    state: ready',
        '  when: cluster_name == "eu-1"',
      ].join('\n'),
    },
    {
      title: 'Send 10% of the requests to the ingress-nginx canary',
      yaml: [
        '- lb_switch:',
        '    provider: ingress_canary',
        '    namespace: shop',
        '    ingress: web-canary',
        '    weight: 10',
      ].join('\n'),
    },
    {
      title: 'Shift an HTTPRoute to the new version: weight 90 for web-v2 in every rule that uses it',
      yaml: [
        '- lb_switch:',
        '    provider: httproute',
        '    namespace: shop',
        '    route: web',
        '    backend: web-v2',
        '    weight: 90',
        '',
        '- lb_switch:',
        '    provider: httproute',
        '    namespace: shop',
        '    route: web',
        '    backend: web-v1',
        '    weight: 10',
        '    rule: 0',
      ].join('\n'),
    },
  ],
  async run(args, ctx): Promise<ModuleResult<LbSwitchResult>> {
    const provider = PROVIDERS.find((p) => p.name === args.provider);
    if (!provider) {
      return { status: 'failed', msg: `lb_switch: unknown provider '${String(args.provider)}' (known: ${PROVIDERS.map((p) => p.name).join(', ')})` };
    }
    const own = new Set(Object.keys(provider.schema.properties));
    const foreign = Object.keys(args).filter((k) => !own.has(k));
    if (foreign.length) {
      const owners = (k: string): string =>
        PROVIDERS.filter((p) => k in p.schema.properties)
          .map((p) => p.name)
          .join(', ');
      return {
        status: 'failed',
        msg: `lb_switch (${provider.name}): ${foreign.map((k) => `\`${k}\` (an argument of ${owners(k)})`).join(', ')} does not apply to provider ${provider.name}`,
      };
    }
    try {
      // The flat schema validated `args` against this provider's declaration (and filled its
      // defaults); what a provider returns is checked against `result` under KPLAY_CHECK_RESULTS.
      return (await provider.run(args as never, ctx)) as ModuleResult<LbSwitchResult>;
    } catch (e) {
      if (e instanceof UnreachableError) throw e;
      return { status: 'failed', msg: `lb_switch (${provider.name}): ${errorMessage(e)}` };
    }
  },
});
