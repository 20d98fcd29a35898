// The differential expression suite (issue 29, "Proof"): ansible-core's own templar and kplay evaluate
// the same expressions with the same variables — the hand-written cases of cases/*.yml and the
// generated ones of generate.ts — and must agree on the value and its Python type, or both fail.
// One `it` per case file / generated family lists every disagreeing case. See README.md.
//
// KPLAY_EXPR_FILTER=<substring> runs the cases whose id, group or text contains it.
// KPLAY_EXPR_REPORT=<file> also writes the full report of disagreements there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyScope } from '../../../src/executor/lazyvars.js';
import { templar } from '../../../src/template/index.js';
import { evaluateWithAnsible } from './ansible.js';
import { loadCaseFiles, type ExprCase } from './cases.js';
import { agree, plainKplay, showOutcome, showVars, type Outcome } from './compare.js';
import { generateCases } from './generate.js';
import { INTENTIONAL, intentionalReason, liquidFallback } from './intentional.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

// The same world for both sides: environment for lookup('env'), files for lookup('file'/'template'),
// UTC for strftime and to_datetime.
const ENV: Record<string, string> = { KPLAY_EXPR_WORD: 'hello world', KPLAY_EXPR_EMPTY: '', KPLAY_EXPR_NUM: '42', TZ: 'UTC' };
Object.assign(process.env, ENV);
const fixtureDir = mkdtempSync(path.join(os.tmpdir(), 'kplay-expr-'));
writeFileSync(path.join(fixtureDir, 'hello.txt'), 'hello\n');
writeFileSync(path.join(fixtureDir, 'lines.txt'), 'one\ntwo\nthree\n\n');
writeFileSync(path.join(fixtureDir, 'data.json'), '{"a": 1, "b": [true, null]}\n');
writeFileSync(path.join(fixtureDir, 'data.yml'), 'a: 1\nb:\n  - x\n  - y\n');
writeFileSync(path.join(fixtureDir, 'greet.j2'), 'Hi {{ name | default("you") }}!\n{% for i in [1, 2] %}{{ i }},{% endfor %}\n');
afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

const FILTER = process.env.KPLAY_EXPR_FILTER;
const all: ExprCase[] = [...loadCaseFiles(path.join(HERE, 'cases')), ...generateCases()].map((c) =>
  c.text.includes('fixture_dir') ? { ...c, vars: { ...c.vars, fixture_dir: fixtureDir } } : c,
);
const cases = FILTER ? all.filter((c) => c.id.includes(FILTER) || c.group.includes(FILTER) || c.text.includes(FILTER)) : all;
const groups = [...new Set(cases.map((c) => c.group))];

function pyTypeOf(v: unknown): string {
  return typeof v === 'boolean' ? 'bool' : `not a boolean (${typeof v})`;
}

function errorText(e: unknown): string {
  const name = e instanceof Error ? e.constructor.name : typeof e;
  const msg = e instanceof Error ? e.message : String(e);
  return `${name}: ${msg.split('\n')[0] ?? ''}`;
}

/** The fixture directory is the playbook's tree for kplay's file lookups (Ansible reads any path). */
const host = { fileRoots: [fixtureDir], searchPaths: [fixtureDir] };

/**
 * kplay's outcome for a case (vars copied: a case cannot change another's). The variables go
 * through the executor's lazy scope, as a task's do: a variable holding a template is rendered
 * when it is read, as in Ansible.
 */
async function evaluateWithKplay(c: ExprCase): Promise<Outcome> {
  const vars = lazyScope(structuredClone(c.vars));
  try {
    if (c.kind === 'cond') {
      const value: unknown = await templar.evalCondition(c.text, vars, { host });
      return { ok: true, value, type: pyTypeOf(value) };
    }
    const r = templar.renderTyped(c.text, vars, { host });
    return { ok: true, value: r.value, type: r.type };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
}

let ansible = new Map<string, Outcome>();
const summary = new Map<string, { cases: number; agree: number; disagree: number; intentional: number }>();

beforeAll(async () => {
  ansible = await evaluateWithAnsible(cases, ENV, fixtureDir);
}, 600_000);

/** One disagreement, 4 lines (vars shown as "same" when equal to the previous listed case's). */
function describeCase(c: ExprCase, a: Outcome, k: Outcome, previousVars?: string): string {
  const vars = showVars(c.vars);
  return [
    `  ${c.id}  [${c.kind}]  ${JSON.stringify(c.text)}`,
    `    vars:    ${vars === previousVars ? '(same as above)' : vars}`,
    `    ansible: ${showOutcome(a)}`,
    `    kplay:   ${showOutcome(k, plainKplay)}`,
  ].join('\n');
}

const reports: string[] = [];

afterAll(() => {
  const rows = [...summary.entries()].map(([g, s]) => `${g.padEnd(28)} ${String(s.cases).padStart(5)} ${String(s.agree).padStart(6)} ${String(s.disagree).padStart(9)} ${String(s.intentional).padStart(12)}`);
  const tot = [...summary.values()].reduce((t, s) => ({ cases: t.cases + s.cases, agree: t.agree + s.agree, disagree: t.disagree + s.disagree, intentional: t.intentional + s.intentional }), { cases: 0, agree: 0, disagree: 0, intentional: 0 });
  const text = [`${'group'.padEnd(28)} ${'cases'.padStart(5)} ${'agree'.padStart(6)} ${'disagree'.padStart(9)} ${'intentional'.padStart(12)}`, ...rows, `${'TOTAL'.padEnd(28)} ${String(tot.cases).padStart(5)} ${String(tot.agree).padStart(6)} ${String(tot.disagree).padStart(9)} ${String(tot.intentional).padStart(12)}`].join('\n');
  console.log(`\ndifferential expression suite (ansible-core templar vs kplay):\n${text}\n`);
  const file = process.env.KPLAY_EXPR_REPORT;
  if (file) writeFileSync(file, `${text}\n\n${reports.join('\n\n')}\n`);
});

describe('differential expressions: ansible-core templar vs kplay', () => {
  it('the batch holds at least 3,000 cases, with unique ids', () => {
    if (FILTER) return;
    expect(all.length).toBeGreaterThanOrEqual(3000);
    expect(new Set(all.map((c) => c.id)).size).toBe(all.length);
  });

  it('Ansible fails exactly the hand-written cases marked as deliberate errors', () => {
    const wrong = cases
      .filter((c) => c.expectError !== undefined)
      .flatMap((c) => {
        const a = ansible.get(c.id);
        if (!a || a.ok !== c.expectError) return [];
        return [`  ${c.id}  ${JSON.stringify(c.text)}  vars ${showVars(c.vars)}\n    marked ${c.expectError ? 'error' : 'success'}, ansible: ${showOutcome(a)}`];
      });
    expect(wrong, `cases whose Ansible outcome is not what the case file says:\n${wrong.join('\n')}`).toEqual([]);
  });

  it('Ansible templated every template case (none came back verbatim, as an untrusted template would)', () => {
    const verbatim = cases.filter((c) => {
      const a = ansible.get(c.id);
      return c.kind === 'template' && a?.ok === true && a.value === c.text && /\{\{|\{%/.test(c.text);
    });
    expect(verbatim.map((c) => c.id)).toEqual([]);
  });

  it('every intentional difference names a case that exists', () => {
    if (FILTER) return;
    const stale = INTENTIONAL.filter((d) => !cases.some((c) => c.group === d.group && c.text === d.text));
    expect(stale).toEqual([]);
  });

  for (const group of groups) {
    it(group, async () => {
      const mine = cases.filter((c) => c.group === group);
      const lines: string[] = [];
      const s = { cases: mine.length, agree: 0, disagree: 0, intentional: 0 };
      let previousVars: string | undefined;
      const listed = (c: ExprCase, a: Outcome, k: Outcome): string => {
        const text = describeCase(c, a, k, previousVars);
        previousVars = showVars(c.vars);
        return text;
      };
      for (const c of mine) {
        const a = ansible.get(c.id);
        if (!a) throw new Error(`no Ansible outcome for ${c.id}`);
        const k = await evaluateWithKplay(c);
        const ok = agree(a, k);
        if (ok && intentionalReason(c) !== undefined) {
          s.disagree++;
          lines.push(`${listed(c, a, k)}\n    listed in intentional.ts, but agrees now: remove the entry`);
        } else if (ok) s.agree++;
        else if (intentionalReason(c) !== undefined || liquidFallback(c, a) !== undefined) s.intentional++;
        else {
          s.disagree++;
          lines.push(listed(c, a, k));
        }
      }
      summary.set(group, s);
      const report = `${group}: ${s.disagree} of ${s.cases} cases disagree\n${lines.join('\n')}`;
      if (lines.length) reports.push(report);
      expect(s.disagree, report).toBe(0);
    });
  }
});
