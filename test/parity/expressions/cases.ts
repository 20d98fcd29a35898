// The hand-written cases of the differential expression suite: test/parity/expressions/cases/*.yml.
//
// A case file is either `{ vars?, kind?, cases: [...] }` or `{ sections: [{ name?, vars?, kind?, cases }] }`.
// A case is a string (its text), or `{ text, vars?, kind?, error?: true }`, or `{ err: text, vars?, kind? }`
// (same as `error: true`): a case marked so is a deliberate error case — Ansible must fail on it, and
// Ansible must succeed on every case not marked so (checked by the suite, so that a case tests what its
// author meant). A case's vars are merged over its section's/file's vars. `kind` is `template` (rendered
// like a task argument) or `cond` (evaluated like `when:`); without one, a text holding `{{`, `{%` or `{#`
// is a template, any other text a condition.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument, visit } from 'yaml';
import { isRecord } from '../../../src/core/shape.js';

/** How a case is evaluated: rendered like a task argument, or like a task's `when`. */
export type CaseKind = 'template' | 'cond';

/** One expression to evaluate with the same variables on both sides. */
export interface ExprCase {
  /** `<group>#<n>` (n counts from 1 in the file/family). */
  id: string;
  /** The case file's name without `.yml`, or `gen/<family>` for generated cases. */
  group: string;
  kind: CaseKind;
  text: string;
  /** The variables (undefined variables are simply absent). */
  vars: Record<string, unknown>;
  /** For hand-written cases: whether the author meant Ansible to fail (undefined for generated ones). */
  expectError?: boolean;
}

/** The kind a text has when the case does not say. */
export function inferKind(text: string): CaseKind {
  return text.includes('{{') || text.includes('{%') || text.includes('{#') ? 'template' : 'cond';
}

function asKind(v: unknown, where: string): CaseKind | undefined {
  if (v === undefined) return undefined;
  if (v === 'template' || v === 'cond') return v;
  throw new Error(`${where}: kind must be "template" or "cond", got ${JSON.stringify(v)}`);
}

function asVars(v: unknown, where: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) throw new Error(`${where}: vars must be a mapping`);
  return v;
}

/**
 * JavaScript numbers cannot tell 2.0 from 2: a variable written as an integral float would be an int on
 * the Ansible side (it receives the vars as JSON). Refuse such vars; build floats in the expression.
 */
function refuseIntegralFloats(source: string, file: string): void {
  const doc = parseDocument(source);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'number' && Number.isInteger(node.value) && /[.eE]/.test(node.source ?? '')) {
        throw new Error(`${file}: the scalar ${node.source ?? ''} is an integral float, which JSON vars cannot carry; write the float in the expression (e.g. 2.0) instead`);
      }
    },
  });
}

interface Section {
  name?: string;
  vars: Record<string, unknown>;
  kind?: CaseKind;
  cases: unknown[];
}

function sectionsOf(doc: unknown, file: string): Section[] {
  if (!isRecord(doc)) throw new Error(`${file}: a case file is a mapping with "cases" or "sections"`);
  const one = (s: Record<string, unknown>, where: string): Section => {
    if (!Array.isArray(s['cases'])) throw new Error(`${where}: "cases" must be a list`);
    return { name: typeof s['name'] === 'string' ? s['name'] : undefined, vars: asVars(s['vars'], where), kind: asKind(s['kind'], where), cases: s['cases'] };
  };
  if (Array.isArray(doc['sections'])) {
    const top = asVars(doc['vars'], file);
    const topKind = asKind(doc['kind'], file);
    return doc['sections'].map((s: unknown, i) => {
      if (!isRecord(s)) throw new Error(`${file}: section ${i + 1} must be a mapping`);
      const sec = one(s, `${file} section ${i + 1}`);
      return { ...sec, vars: { ...top, ...sec.vars }, kind: sec.kind ?? topKind };
    });
  }
  return [one(doc, file)];
}

/** Parse one case file (its group is the file's name without `.yml`). */
export function parseCaseFile(file: string, source: string): ExprCase[] {
  refuseIntegralFloats(source, file);
  const group = path.basename(file).replace(/\.ya?ml$/, '');
  const doc: unknown = parseDocument(source).toJS();
  const out: ExprCase[] = [];
  for (const sec of sectionsOf(doc, file)) {
    for (const raw of sec.cases) {
      const where = `${file} case ${out.length + 1}`;
      let text: string;
      let vars = sec.vars;
      let kind = sec.kind;
      let expectError = false;
      if (typeof raw === 'string') text = raw;
      else if (isRecord(raw)) {
        const t = raw['text'] ?? raw['err'];
        if (typeof t !== 'string') throw new Error(`${where}: a case needs a string "text" (or "err")`);
        text = t;
        vars = { ...sec.vars, ...asVars(raw['vars'], where) };
        kind = asKind(raw['kind'], where) ?? kind;
        expectError = raw['err'] !== undefined || raw['error'] === true;
      } else throw new Error(`${where}: a case is a string or a mapping`);
      out.push({ id: `${group}#${out.length + 1}`, group, kind: kind ?? inferKind(text), text, vars, expectError });
    }
  }
  return out;
}

/** Every hand-written case, file by file (sorted by name). */
export function loadCaseFiles(dir: string): ExprCase[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((f) => parseCaseFile(path.join(dir, f), readFileSync(path.join(dir, f), 'utf8')));
}
