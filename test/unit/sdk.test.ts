// The public SDK: built-in modules import only `kplay/sdk` (nothing from kplay's internals), and
// the package exports it with its types, as a community module would import it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

const modulesDir = path.join(repoRoot, 'modules');

describe('kplay/sdk', () => {
  it('is the only kplay import of every built-in module', () => {
    const offenders: string[] = [];
    for (const f of readdirSync(modulesDir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(path.join(modulesDir, f), 'utf8');
      for (const m of text.matchAll(/^import[^;]*from '([^']+)';/gm)) {
        const spec = m[1] ?? '';
        if (spec.startsWith('.') || spec.includes('/src/')) offenders.push(`${f}: ${spec}`);
      }
      expect(text, f).toContain("from 'kplay/sdk'");
    }
    expect(offenders).toEqual([]);
  });

  it('is exported by package.json with its types, and resolves from the built package', async () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types: string; import: string }> };
    expect(pkg.name).toBe('kplay');
    const sdk = pkg.exports['./sdk'];
    expect(sdk).toBeDefined();
    expect(existsSync(path.join(repoRoot, sdk?.import ?? 'missing'))).toBe(true); // built by npm test before the tests
    expect(existsSync(path.join(repoRoot, sdk?.types ?? 'missing'))).toBe(true);
    const mod = (await import(path.join(repoRoot, sdk?.import ?? ''))) as Record<string, unknown>;
    for (const name of ['defineModule', 'kubeFor', 'applyObjects', 'planApply', 'HelmCli', 'tether', 'errorMessage', 'UnreachableError']) expect(typeof mod[name], name).toBe('function');
  });
});
