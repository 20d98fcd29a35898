// Arguments and results are declared once: the schema every built-in module declares is what
// ajv validates with (defaults filled in by ajv, not by hand), what the static type of `args` is
// (checked by tsc over this file: `npm test` type-checks the tests), and what the generated
// reference documents.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { HttpCheckArgs } from '../../modules/http_check.js';
import type { HelmReleaseArgs } from '../../modules/helm_release.js';
import type { K8sApplyArgs } from '../../modules/k8s_apply.js';
import type { HaproxySwitchArgs, K8sServiceSwitchArgs } from '../../src/lb/index.js';
import { ajvInstance, validateArgs } from '../../src/load/schema.js';
import { moduleMarkdown } from '../../src/plugins/docs.js';
import type { AnyModule, JsonSchema } from '../../src/core/module.js';
import { repoRoot } from '../helpers/cli.js';

const modulesDir = path.join(repoRoot, 'modules');

async function builtins(): Promise<AnyModule[]> {
  const out: AnyModule[] = [];
  for (const f of readdirSync(modulesDir).filter((n) => n.endsWith('.ts')).sort()) {
    const ns = (await import(path.join(modulesDir, f))) as { default: AnyModule };
    out.push(ns.default);
  }
  return out;
}

const props = (s: JsonSchema): Record<string, JsonSchema> => (s.properties ?? {}) as Record<string, JsonSchema>;

describe('module declarations', () => {
  it('every built-in module declares described arguments, a described result, check and diff mode', async () => {
    const mods = await builtins();
    expect(mods.map((m) => m.name)).toContain('helm_release');
    for (const m of mods) {
      expect(m.schema.type, m.name).toBe('object');
      expect(m.schema.additionalProperties, m.name).toBe(false);
      for (const [k, p] of Object.entries(props(m.schema))) expect(p.description, `${m.name}.${k}`).toBeTruthy();
      expect(m.result.type, `${m.name} result`).toBe('object');
      for (const [k, p] of Object.entries(props(m.result))) expect(p.description, `${m.name} result.${k}`).toBeTruthy();
      expect(['supported', 'unsupported'], m.name).toContain(m.checkMode);
      expect(['supported', 'unsupported'], m.name).toContain(m.diffMode);
    }
  });

  it('every default is a valid value of its own argument, and the reference shows it', async () => {
    for (const m of await builtins()) {
      const doc = moduleMarkdown(m, 2);
      for (const [k, p] of Object.entries(props(m.schema))) {
        if (p.default === undefined) continue;
        const { default: def, ...decl } = p;
        expect(ajvInstance().validate(decl, def), `${m.name}.${k} default ${JSON.stringify(def)}`).toBe(true);
        expect(doc, `${m.name}.${k}`).toContain(`| \`${k}\` |`);
        expect(doc, `${m.name}.${k}`).toContain(`\`${JSON.stringify(def)}\``);
      }
      for (const k of Object.keys(props(m.result))) expect(doc, `${m.name} result.${k}`).toContain(`| \`${k}\` |`);
    }
  });

  it('ajv fills the declared defaults in (on a copy: the task keeps its arguments as written)', async () => {
    const mods = new Map((await builtins()).map((m) => [m.name, m]));
    const info = mods.get('k8s_info');
    if (!info) throw new Error('k8s_info missing');
    const raw = { kind: 'Pod', wait_condition: { type: 'Ready' } };
    const checked = validateArgs(info.schema, raw, { defaults: true });
    expect(checked).toEqual({ ok: true, value: { kind: 'Pod', api_version: 'v1', wait: false, wait_sleep: 5, wait_timeout: 120, wait_condition: { type: 'Ready', status: 'True' } } });
    expect(raw).toEqual({ kind: 'Pod', wait_condition: { type: 'Ready' } });
    // coerced arguments (a templated "30") get their defaults too
    const http = mods.get('http_check');
    if (!http) throw new Error('http_check missing');
    expect(validateArgs(http.schema, { url: 'http://x', retries: '3' }, { defaults: true })).toMatchObject({ ok: true, value: { retries: 3, delay: 1, timeout: 10, status: 200, method: 'GET' } });
  });

  it('lb_switch fills in only the selected provider\'s defaults', async () => {
    const lb = (await builtins()).find((m) => m.name === 'lb_switch');
    if (!lb) throw new Error('lb_switch missing');
    const haproxy = validateArgs(lb.schema, { provider: 'haproxy', socket: '/s', backend: 'b', server: 's', state: 'drain' }, { defaults: true });
    expect(haproxy).toEqual({ ok: true, value: { provider: 'haproxy', socket: '/s', backend: 'b', server: 's', state: 'drain', wait_drained: false, drain_timeout: 300 } });
    const svc = validateArgs(lb.schema, { provider: 'k8s_service', namespace: 'n', service: 'web', state: 'drain' }, { defaults: true });
    expect(svc).toEqual({ ok: true, value: { provider: 'k8s_service', namespace: 'n', service: 'web', state: 'drain', drain_label: { 'kplay.dev/drained': 'true' }, min_ready: 1, endpoints_timeout: 30 } });
    expect(moduleMarkdown(lb)).toContain('Default: `300` (haproxy)');
  });

  it('the static type of args comes from the same schema: defaults make a key present, others stay optional', () => {
    expectTypeOf<HttpCheckArgs['url']>().toEqualTypeOf<string>();
    expectTypeOf<HttpCheckArgs['timeout']>().toEqualTypeOf<number>();
    expectTypeOf<HttpCheckArgs['status']>().toEqualTypeOf<number | number[]>();
    expectTypeOf<HttpCheckArgs['body']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<K8sApplyArgs['state']>().toEqualTypeOf<'present' | 'absent'>();
    expectTypeOf<K8sApplyArgs['prune_id']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<HelmReleaseArgs['values']>().toEqualTypeOf<{ [x: string]: unknown }>();
    expectTypeOf<HelmReleaseArgs['on_pending']>().toEqualTypeOf<'fail' | 'rollback'>();
    expectTypeOf<HaproxySwitchArgs['provider']>().toEqualTypeOf<'haproxy'>();
    expectTypeOf<HaproxySwitchArgs['drain_timeout']>().toEqualTypeOf<number>();
    expectTypeOf<K8sServiceSwitchArgs['drain_label']>().toEqualTypeOf<{ [x: string]: string }>();
  });
});
