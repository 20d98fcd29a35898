// House rule (#35): src/ is layered. A folder imports only itself and folders below it, so a
// newcomer can read the pipeline bottom-up and a change in a low layer never has to know who
// sits above it. Type-only imports count too (they are coupling all the same).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

/**
 * The layer order, lowest first — written down once, here. What each layer is for:
 * - core: the module contract, args/schema types, masking, process/sleep/tether (imports nothing of kplay's)
 * - load: YAML, input errors, schema validation; plugins: module loading, docs, precompiled validators
 * - template: the expression language; vars: variable precedence
 * - k8s, local, helm, lb, analysis: what tasks talk to (clusters, the machine, helm, load balancers, metrics)
 * - report: the event union, renderers, record shapes; audit: records, locks, journal, gates
 * - inventory, playbook: reading the user's inputs
 * - plan, executor, fleet, run: carrying a run out (run: the service the commands call)
 * - sdk: the public facade for modules; cli: flags → run service → exit code; build: build scripts
 */
const LAYERS = [
  'core', 'load', 'plugins', 'template', 'vars',
  'k8s', 'local', 'helm', 'lb', 'analysis',
  'report', 'audit',
  'inventory', 'playbook',
  'plan', 'executor', 'fleet', 'run',
  'sdk', 'cli', 'build',
] as const;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? files(p) : n.endsWith('.ts') && !n.endsWith('.d.ts') ? [p] : [];
  });
}

/** Import/export specifiers of a file (static, type-only and dynamic imports). */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) out.push(m[1] ?? '');
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) out.push(m[1] ?? '');
  return out;
}

const src = path.join(repoRoot, 'src');
const folderOf = (file: string): string => path.relative(src, file).split(path.sep)[0] ?? '';

describe('layers of src/', () => {
  const all = files(src);

  it('names every folder of src/ in the layer order', () => {
    const folders = readdirSync(src).filter((n) => statSync(path.join(src, n)).isDirectory());
    expect(folders.filter((f) => !(LAYERS as readonly string[]).includes(f))).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward: string[] = [];
    for (const file of all) {
      const from = folderOf(file);
      const rank = LAYERS.indexOf(from as (typeof LAYERS)[number]);
      for (const spec of specifiers(file)) {
        if (!spec.startsWith('.')) continue;
        const target = path.resolve(path.dirname(file), spec);
        if (!target.startsWith(src + path.sep)) continue;
        const to = folderOf(target);
        if (to === from) continue;
        if (LAYERS.indexOf(to as (typeof LAYERS)[number]) > rank) upward.push(`${path.relative(repoRoot, file)} (${from}) → ${spec} (${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keeps the ground floor free of kplay imports outside itself', () => {
    const out = all.filter((f) => folderOf(f) === 'core').flatMap((f) =>
      specifiers(f).filter((s) => s.startsWith('.') && folderOf(path.resolve(path.dirname(f), s)) !== 'core').map((s) => `${path.relative(repoRoot, f)} → ${s}`));
    expect(out).toEqual([]);
  });

  it('lets modules/ import kplay only through kplay/sdk', () => {
    const out: string[] = [];
    for (const file of files(path.join(repoRoot, 'modules'))) {
      for (const spec of specifiers(file)) {
        if (spec.startsWith('.') && path.resolve(path.dirname(file), spec).startsWith(src)) out.push(`${path.relative(repoRoot, file)} → ${spec}`);
      }
    }
    expect(out).toEqual([]);
  });
});
