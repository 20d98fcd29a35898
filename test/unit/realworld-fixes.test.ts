// Pure-logic checks of the fixes the real-world corpus (test/fixtures/realworld) led to.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../src/inventory/resolve.js';
import { withImplicitLocalhost } from '../../src/inventory/localhost.js';
import { matchClusters, parsePattern } from '../../src/inventory/patterns.js';
import { roleMap } from '../../src/playbook/roles.js';
import { lazyScope } from '../../src/executor/lazyvars.js';
import { templar } from '../../src/template/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'kplay-rw-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('host patterns as ansible-core splits and subscripts them', () => {
  it('group[i], group[-1], group[a:b] (inclusive), group[a:]', async () => {
    const file = path.join(root, 'hosts.yml');
    writeFileSync(file, 'all:\n  children:\n    nodes:\n      hosts:\n        n1:\n        n2:\n        n3:\n        n4:\n');
    const inv = await loadInventory(file, { cwd: root, env: { HOME: root } });
    expect(matchClusters(inv, 'nodes[0]')).toEqual(['n1']);
    expect(matchClusters(inv, 'nodes[-1]')).toEqual(['n4']);
    expect(matchClusters(inv, 'nodes[1:2]')).toEqual(['n2', 'n3']);
    expect(matchClusters(inv, 'nodes[2:]')).toEqual(['n3', 'n4']);
    expect(matchClusters(inv, 'nodes[0]:nodes[3]')).toEqual(['n1', 'n4']);
    expect(matchClusters(inv, 'nodes:!nodes[0]')).toEqual(['n2', 'n3', 'n4']);
    expect(() => matchClusters(inv, 'nodes[9]')).toThrow("No hosts matched the subscripted pattern 'nodes[9]'");
  });

  it('::1 is one term (the implicit localhost); colons inside [...] do not split; commas split alone', async () => {
    expect(parsePattern('::1')).toEqual([{ op: 'union', text: '::1', raw: '::1' }]);
    expect(parsePattern('web[0:1]:db')).toEqual([
      { op: 'union', text: 'web', subscript: [0, 1], raw: 'web[0:1]' },
      { op: 'union', text: 'db', raw: 'db' },
    ]);
    expect(parsePattern('a,b').map((t) => t.text)).toEqual(['a', 'b']);
    const inv = await loadInventory(path.join(root, 'hosts.yml'), { cwd: root, env: { HOME: root } });
    const withLocal = withImplicitLocalhost(inv, ['::1'], { cwd: root, env: { HOME: root } });
    expect(matchClusters(withLocal, '::1')).toEqual(['localhost']);
  });
});

describe('role defaults/vars as a directory', () => {
  it('loads every file under defaults/main/ in sorted order, later keys winning', async () => {
    const dir = path.join(root, 'roles/r');
    mkdirSync(path.join(dir, 'defaults/main/sub'), { recursive: true });
    writeFileSync(path.join(dir, 'defaults/main/a.yml'), 'x: 1\ny: a\n');
    writeFileSync(path.join(dir, 'defaults/main/b.yaml'), 'y: b\n');
    writeFileSync(path.join(dir, 'defaults/main/sub/c.json'), '{"z": 3}');
    writeFileSync(path.join(dir, 'defaults/main/notes.txt'), 'not: loaded\n');
    expect(await roleMap(dir, 'defaults', undefined, undefined, () => undefined)).toEqual({ x: 1, y: 'b', z: 3 });
  });
});

describe('omit through a variable', () => {
  it('a variable resolving to omit is dropped where it is used as an argument', () => {
    const scope = lazyScope({ kc: "{{ lookup('env', 'NO_SUCH_VAR_RW') | default(omit, true) }}" });
    expect(templar.renderValueSync({ kubeconfig: '{{ kc | default(omit) }}', kind: 'Pod' }, scope)).toEqual({ kind: 'Pod' });
  });
});
