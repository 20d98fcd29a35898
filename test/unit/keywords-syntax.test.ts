// The playbook's keywords are declared once (src/playbook/syntax.ts): the loader's key checks and
// the editor schema (schemas/playbook.schema.json) both come from it, so they accept the same keys
// on each node kind (module task, block, include_tasks, include_role, meta).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlaybook } from '../../src/playbook/parse.js';
import { BLOCK_KEYS, INCLUDE_KEYS, INHERITED_KEYS, META_KEYS, PLAY_KEYS, ROLE_TASK_KEYS, TASK_KEYWORDS } from '../../src/playbook/syntax.js';
import { loadRegistry, type ModuleRegistry } from '../../src/plugins/registry.js';
import { repoRoot } from '../helpers/cli.js';

const schema = JSON.parse(readFileSync(path.join(repoRoot, 'schemas/playbook.schema.json'), 'utf8')) as object;
const editor = new Ajv({ strict: false }).compile(schema);

let dir: string;
let registry: ModuleRegistry;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-syntax-'));
  writeFileSync(path.join(dir, 'inc.yml'), '- debug: {msg: hi}\n');
  registry = await loadRegistry({});
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether the loader takes a play with this one task. */
async function loads(task: Record<string, unknown>): Promise<boolean> {
  const file = path.join(dir, 'play.yml');
  writeFileSync(file, JSON.stringify([{ hosts: 'all', tasks: [task] }]));
  return loadPlaybook(file, { registry }).then(
    () => true,
    () => false,
  );
}
const edits = (task: Record<string, unknown>): boolean => editor([{ hosts: 'all', tasks: [task] }]);

/** A value each inherited keyword accepts. */
const VALUE: Record<string, unknown> = { environment: { A: 'b' }, module_defaults: {}, throttle: 2, collections: ['kubernetes.core'], timeout: 5, delegate_to: 'localhost', debugger: 'never', become_user: 'root', connection: 'local', port: 22, remote_user: 'x', become_method: 'sudo', become_flags: '-H', become_exe: 'sudo' };
const valueOf = (k: string): unknown => VALUE[k] ?? true;

describe('one declaration of the keywords', () => {
  it('gives every node kind the keywords it inherits', () => {
    for (const keys of [BLOCK_KEYS, INCLUDE_KEYS, ROLE_TASK_KEYS, META_KEYS]) for (const k of INHERITED_KEYS) expect(keys.has(k)).toBe(true);
    for (const k of INHERITED_KEYS) expect(k in TASK_KEYWORDS).toBe(true);
    // a play takes them too, except the per-task delegation
    expect(PLAY_KEYS.has('no_log') && !PLAY_KEYS.has('delegate_to') && PLAY_KEYS.has('hosts')).toBe(true);
  });
  const nodes: [string, Record<string, unknown>][] = [
    ['a module task', { debug: { msg: 'x' } }],
    ['a block', { block: [{ debug: { msg: 'x' } }] }],
    ['include_tasks', { include_tasks: 'inc.yml' }],
    ['import_tasks', { import_tasks: 'inc.yml' }],
    ['meta', { meta: 'noop' }],
  ];
  it.each(nodes)('%s: the loader and the editor schema accept each inherited keyword', async (_name, node) => {
    for (const k of INHERITED_KEYS) {
      const task = { ...node, [k]: valueOf(k) };
      expect([k, await loads(task)]).toEqual([k, true]);
      expect([k, edits(task)]).toEqual([k, true]);
    }
  });
  it.each(nodes)('%s: both refuse a key no declaration has', async (_name, node) => {
    const task = { ...node, whne: 'x' };
    expect(await loads(task)).toBe(false);
    expect(edits(task)).toBe(false);
  });
  it('a block refuses a module task\'s own keywords (register, loop) in both', async () => {
    for (const k of ['register', 'loop']) {
      const task = { block: [{ debug: { msg: 'x' } }], [k]: k === 'loop' ? [1] : 'r' };
      expect([k, await loads(task)]).toEqual([k, false]);
      expect([k, edits(task)]).toEqual([k, false]);
    }
  });
});
