// House rule (#35): small files with one job each. A source file over MAX_LINES is a grab-bag until
// shown otherwise: split it along its jobs, or — when it really is one job that does not divide
// (a grammar, one class, a table of like entries) — name it below with that job, so the exception
// is a reviewed decision and not drift.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

const MAX_LINES = 450;

/** Files allowed over MAX_LINES, each with the one job that keeps it whole. */
const ONE_JOB: Record<string, string> = {
  'src/template/parser.ts': 'the Jinja grammar: one recursive-descent parser producing the AST union',
  'src/template/evaluate.ts': 'the evaluator: one walk over the AST union (operators live in operators.ts)',
  'src/template/engine.ts': 'the Templar class: rendering strings, values and conditions with caches and error positions',
  'src/template/filters/pyregex.ts': "Python's re syntax translated to JavaScript RegExp, one translator",
  'src/template/filters/pyyaml.ts': "PyYAML's dumper as ansible-core runs it (to_yaml/to_nice_yaml), one emitter",
  'src/inventory/builder.ts': "the Builder class: ansible-core's InventoryData rules (groups, hosts, vars files, cycles) in one class",
  'src/executor/play.ts': "the PlayRun class: Ansible's linear strategy over one play's task tree on one batch (includes live in includes.ts)",
  'modules/http_check.ts': 'one module: http_check (its argument schema, the probe and its assertions)',
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mjs)$/.test(n) && !n.endsWith('.d.ts') ? [p] : [];
  });
}

describe('source files', () => {
  const all = [...files(path.join(repoRoot, 'src')), ...files(path.join(repoRoot, 'modules'))];
  const lines = new Map(all.map((f) => [path.relative(repoRoot, f).split(path.sep).join('/'), readFileSync(f, 'utf8').split('\n').length]));

  it(`are at most ${MAX_LINES} lines, or named with their one job`, () => {
    const over = [...lines].filter(([f, n]) => n > MAX_LINES && !(f in ONE_JOB)).map(([f, n]) => `${f}: ${n} lines`);
    expect(over).toEqual([]);
  });

  it('names no exception that is gone or back under the limit', () => {
    expect(Object.keys(ONE_JOB).filter((f) => (lines.get(f) ?? 0) <= MAX_LINES)).toEqual([]);
  });
});
