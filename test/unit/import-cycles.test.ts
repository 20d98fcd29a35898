// House rule: no import cycles (type-only imports included) in src/ and modules/.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? files(p) : n.endsWith('.ts') && !n.endsWith('.d.ts') ? [p] : [];
  });
}

/** Relative imports of a file, resolved to .ts paths (`kplay/sdk` is src/sdk/index.ts). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
    const spec = m[1] ?? '';
    if (spec === 'kplay/sdk') out.push(path.join(repoRoot, 'src/sdk/index.ts'));
    else if (spec.startsWith('.')) out.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return out;
}

describe('import graph', () => {
  it('has no cycles in src/ and modules/', () => {
    const all = [...files(path.join(repoRoot, 'src')), ...files(path.join(repoRoot, 'modules'))];
    const graph = new Map(all.map((f) => [f, importsOf(f)]));
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const stack: string[] = [];
    const visit = (f: string): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'visiting') {
        cycles.push([...stack.slice(stack.indexOf(f)), f].map((p) => path.relative(repoRoot, p)).join(' → '));
        return;
      }
      state.set(f, 'visiting');
      stack.push(f);
      for (const d of graph.get(f) ?? []) if (graph.has(d)) visit(d);
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of all) visit(f);
    expect(cycles).toEqual([]);
  });
});
