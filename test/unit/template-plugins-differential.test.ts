// The filter and test library against ansible-core 2.19 itself: every case of
// test/fixtures/template-plugins/cases.json was evaluated by ansible-core's templar (gen.py there,
// run with the Ansible venv); here kplay's plug-ins must give the same value and type, or fail
// where Ansible fails (with Ansible's message, except the few listed below).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILTERS, TESTS } from '../../src/template/filters/index.js';
import type { PluginContext } from '../../src/template/plugins.js';
import { PyFloat, Undef, isMap } from '../../src/template/values.js';
import { pyFloatRepr } from '../../src/template/filters/pynum.js';
import { PyDatetime } from '../../src/template/filters/pytime.js';
import { repoRoot } from '../helpers/cli.js';

interface Case {
  f: string;
  kind?: 'filter' | 'test';
  v: unknown;
  a: unknown[];
  k: Record<string, unknown>;
  undef?: boolean;
  unordered?: boolean;
  want: { ok?: unknown; err?: string };
}

const cases = JSON.parse(readFileSync(path.join(repoRoot, 'test/fixtures/template-plugins/cases.json'), 'utf8')) as Case[];

/** Floats arrive as {"f": "repr"}: integral ones become PyFloat, as the evaluator makes them. */
function dec(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dec);
  if (isMap(v)) {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === 'f') {
      const t = String(v.f);
      const n = t === 'inf' ? Infinity : t === '-inf' ? -Infinity : t === 'nan' ? NaN : Number(t);
      return Number.isInteger(n) ? new PyFloat(n) : n;
    }
    return Object.fromEntries(keys.map((k) => [k, dec(v[k])]));
  }
  return v;
}

/** The same tagged form gen.py writes for Python's results. */
function enc(v: unknown): unknown {
  if (v instanceof Undef) return { undef: v.message };
  if (v instanceof PyFloat) return { f: pyFloatRepr(v.value) };
  if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) ? v : { f: pyFloatRepr(v) };
  if (v instanceof PyDatetime) return { dt: v.toString() };
  if (Array.isArray(v)) return v.map(enc);
  if (isMap(v)) return { d: Object.entries(v).map(([k, x]) => [k, enc(x)]) };
  return v;
}

const ctx: PluginContext = {
  variable: (name) => new Undef(`'${name}' is undefined`, name),
  variableNames: () => [],
  render: (t) => t,
  searchPaths: [repoRoot],
  fileRoots: [repoRoot],
  env: {},
  addSecret: () => undefined,
};

/**
 * Where kplay's message differs from the innermost Python exception on purpose: Ansible's outer
 * message (what its user sees) wraps it, or Python names its internal types (`_AnsibleLazyTemplateDict`).
 */
const OWN_MESSAGE = new Set([
  // Ansible's outer message wraps the Python error shown in cases.json
  'unique', 'reverse', 'human_readable', 'human_to_bytes', 'log',
  // Python names its lazy container types (`_AnsibleLazyTemplateDict`), kplay says `dict`
  'dictsort', 'combine', 'dict2items', 'subset', 'basename', 'dirname', 'splitext', 'community.general.counter',
  // jmespath.js words its syntax errors differently from the Python jmespath
  'community.general.json_query',
  // `map(attribute=…)` on a missing key: the undefined value fails when the evaluator uses it (same message)
  'map',
]);

function run(c: Case): unknown {
  const table = c.kind === 'test' ? TESTS : FILTERS;
  const def = table.get(c.f);
  if (!def) throw new Error(`no plug-in named ${c.f}`);
  const input = c.undef ? new Undef("'undefined_var' is undefined", 'undefined_var') : dec(c.v);
  if (input instanceof Undef && !def.acceptsUndefined) throw new Error(input.message);
  const kwargs = Object.fromEntries(Object.entries(c.k).map(([k, x]) => [k, dec(x)]));
  const out = def.fn(input, c.a.map(dec), kwargs, ctx);
  // what the evaluator does with a result: an undefined value (or a list holding one) fails when used
  if (out instanceof Undef) throw new Error(out.message);
  if (Array.isArray(out)) for (const x of out) if (x instanceof Undef) throw new Error(x.message);
  return out;
}

describe('plug-ins against ansible-core 2.19 (test/fixtures/template-plugins/cases.json)', () => {
  it('has the cases', () => {
    expect(cases.length).toBeGreaterThan(1000);
  });
  const groups = new Map<string, Case[]>();
  for (const c of cases) groups.set(c.f, [...(groups.get(c.f) ?? []), c]);
  for (const [name, list] of groups) {
    it(`${list[0]?.kind === 'test' ? 'test' : 'filter'} ${name} (${list.length} cases)`, () => {
      for (const c of list) {
        const label = `${name} ${JSON.stringify(c.v)} ${JSON.stringify(c.a)} ${JSON.stringify(c.k)}${c.undef ? ' (undefined input)' : ''}`;
        if (c.want.err !== undefined) {
          let message: string | undefined;
          try {
            run(c);
          } catch (e) {
            message = e instanceof Error ? e.message : String(e);
          }
          expect(message, `${label} should fail like Ansible: ${c.want.err}`).toBeDefined();
          if (!OWN_MESSAGE.has(name)) expect(message, label).toBe(c.want.err);
          continue;
        }
        let got = enc(run(c));
        let want = c.want.ok;
        if (c.unordered && Array.isArray(got) && Array.isArray(want)) {
          got = [...got].sort();
          want = [...want].sort();
        }
        expect(got, label).toEqual(want);
      }
    });
  }
});
