/**
 * `lb_switch`: take a backend server out of (or back into) a load balancer's rotation.
 * The `provider:` selects the load balancer; each provider is one file in `src/lb/`.
 */
import { defineModule, type JsonSchema, type ModuleResult } from '../src/sdk/module.js';
import { errorMessage } from '../src/load/errors.js';
import { PROVIDERS, type LbSwitchArgs } from '../src/lb/index.js';

/** Flat schema: every provider's properties, plus per-provider `required` via `if`/`then`. */
function buildSchema(): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    provider: {
      type: 'string',
      enum: PROVIDERS.map((p) => p.name),
      description: `Load balancer kind. ${PROVIDERS.map((p) => `\`${p.name}\`: ${p.summary}`).join(' ')}`,
    },
  };
  for (const p of PROVIDERS) {
    for (const [k, v] of Object.entries(p.properties)) {
      const prev = properties[k];
      if (prev !== undefined && JSON.stringify(prev) !== JSON.stringify(v)) {
        throw new Error(`lb_switch: provider ${p.name} redefines argument '${k}' differently`);
      }
      properties[k] = v;
    }
  }
  return {
    type: 'object',
    additionalProperties: false,
    required: ['provider'],
    properties,
    allOf: PROVIDERS.map((p) => ({
      if: { properties: { provider: { const: p.name } }, required: ['provider'] },
      // `properties` restates the keys (as `true`) so ajv's strictRequired sees them defined here.
      then: { properties: Object.fromEntries(p.required.map((k) => [k, true])), required: p.required },
    })),
  };
}

export default defineModule<LbSwitchArgs>({
  name: 'lb_switch',
  summary: 'Drain, disable or enable a backend server in a load balancer (HAProxy), optionally waiting for sessions to end',
  description: [
    'Sets the administrative state (`ready`, `drain`, `maint`) and optionally the weight of one server of a',
    'load-balancer pool, idempotently: the current state is read first and nothing is sent when it already matches',
    '(status `ok`). After a switch the state is read back and verified.',
    '',
    '**haproxy**: talks to the runtime API (`stats socket … level admin`) over a unix socket or TCP. With `sockets`,',
    'several HAProxy instances are switched together, all-or-nothing: every instance is read first, and if switching',
    'one fails, the ones already switched are reverted. `wait_drained` polls `show stat` every 200 ms until the',
    "server's current sessions reach 0 (HAProxy has no push API), failing after `drain_timeout` seconds.",
    '',
    'The result has `provider`, `target` (`backend/server @ socket`), `previous` and `current` state',
    '(`admin_state`, `operational_state`, `weight`), `drain` (`sessions_at_start`, `waited_ms`) and `instances`',
    '(one entry per socket). **Check mode** only reads and reports what would change. `--diff` shows the',
    'state before and after.',
  ].join('\n'),
  schema: buildSchema(),
  checkMode: 'supported',
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
  ],
  async run(args, ctx): Promise<ModuleResult> {
    const provider = PROVIDERS.find((p) => p.name === args.provider);
    if (!provider) {
      return { status: 'failed', msg: `lb_switch: unknown provider '${String(args.provider)}' (known: ${PROVIDERS.map((p) => p.name).join(', ')})` };
    }
    try {
      return await provider.run(args, ctx);
    } catch (e) {
      return { status: 'failed', msg: `lb_switch (${provider.name}): ${errorMessage(e)}` };
    }
  },
});
