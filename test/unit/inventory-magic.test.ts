// The magic variables as the engine computes them (src/executor/task-vars.ts, the one place), through a
// managed run in check mode (no cluster is contacted: debug tasks only), for an inventory cluster
// and for Ansible's implicit localhost.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runManaged } from '../../src/run/managed-run.js';
import { groupsMap, inventoryVars } from '../../src/inventory/host-vars.js';
import { loadInventory } from '../../src/inventory/resolve.js';
import type { Inventory } from '../../src/inventory/types.js';
import { loadPlaybook } from '../../src/playbook/parse.js';
import type { RunEvent } from '../../src/report/events.js';
import { Masker } from '../../src/core/mask.js';
import { loadRegistry, type ModuleRegistry } from '../../src/plugins/registry.js';
import { controllerPython } from '../../src/core/python.js';
import { RunVars } from '../../src/executor/task-vars.js';

const FIX = fileURLToPath(new URL('../fixtures/inventory/', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'kplay-magic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let registry: ModuleRegistry;
let inv: Inventory;
beforeAll(async () => {
  registry = await loadRegistry({});
  inv = await loadInventory('example.yml', { cwd: FIX, env: { HOME: '/home/tester' } });
});

const MAGIC = ['cluster_name', 'inventory_hostname', 'group_names', 'groups', 'clusters', 'check_mode', 'ansible_check_mode', 'play_name', 'run_id', 'inventory_dir', 'playbook_dir'];

/** Run `hosts` with one debug task printing the magic vars as JSON; msg per cluster. */
async function magicOf(hosts: string): Promise<{ msgs: Record<string, Record<string, unknown>> }> {
  const file = path.join(dir, `pb-${hosts.replace(/\W/g, '_')}.yml`);
  const fields = [...MAGIC, 'ansible_connection'].map((k) => `"${k}": {{ (${k} | default('UNDEFINED')) | to_json }}`).join(', ');
  writeFileSync(file, `- name: magic play\n  hosts: ${hosts}\n  tasks:\n    - name: show\n      debug:\n        msg: ${JSON.stringify(`{${fields}}`)}\n`);
  const playbook = await loadPlaybook(file, { registry });
  const events: RunEvent[] = [];
  const { summary } = await runManaged({
    playbook,
    inventory: inv,
    registry,
    extraVars: {},
    masker: new Masker(),
    check: true,
    signal: new AbortController().signal,
    onEvent: (e) => events.push(e),
  });
  expect(summary.exitCode).toBe(0);
  const msgs: Record<string, Record<string, unknown>> = {};
  for (const e of events) if (e.type === 'task_result' && e.task === 'show') msgs[e.cluster] = JSON.parse(String(e.msg)) as Record<string, unknown>;
  return { msgs };
}

describe('magic variables, as the engine sets them', () => {
  it('for an inventory cluster', async () => {
    const { msgs } = await magicOf('prod-eu-1');
    const m = msgs['prod-eu-1'];
    expect(m).toMatchObject({
      cluster_name: 'prod-eu-1',
      inventory_hostname: 'prod-eu-1',
      group_names: ['eu', 'prod'],
      check_mode: true,
      ansible_check_mode: true,
      play_name: 'magic play',
      inventory_dir: inv.dir,
      playbook_dir: dir,
      ansible_connection: 'UNDEFINED',
    });
    expect(m?.run_id).toMatch(/^\d{8}T\d{9}-[0-9a-f]{6}$/);
    expect(m?.groups).toEqual(groupsMap(inv));
    expect((m?.clusters as Record<string, unknown>)['prod-eu-2']).toEqual(inventoryVars(inv, 'prod-eu-2'));
  });

  it('for the implicit localhost: inventory_hostname localhost, ansible_connection local, in no group', async () => {
    const { msgs } = await magicOf('localhost');
    expect(Object.keys(msgs)).toEqual(['localhost']);
    expect(msgs.localhost).toMatchObject({
      cluster_name: 'localhost',
      inventory_hostname: 'localhost',
      group_names: [],
      ansible_connection: 'local',
      groups: { all: ['prod-eu-1', 'prod-eu-2'], ungrouped: [], prod: ['prod-eu-1', 'prod-eu-2'], eu: ['prod-eu-1', 'prod-eu-2'] },
    });
  });

  it('all does not include the implicit localhost', async () => {
    const { msgs } = await magicOf('all');
    expect(Object.keys(msgs).sort()).toEqual(['prod-eu-1', 'prod-eu-2']);
  });
});

describe('RunVars, the one place the engine builds variables', () => {
  it('computes the run-wide magic variables once, from the inventory', () => {
    const vars = new RunVars(inv, { check: false, runId: 'r1', playbookDir: dir });
    expect(vars.magic).toEqual({ groups: groupsMap(inv), clusters: { 'prod-eu-1': inventoryVars(inv, 'prod-eu-1'), 'prod-eu-2': inventoryVars(inv, 'prod-eu-2') }, check_mode: false, run_id: 'r1', inventory_dir: inv.dir, playbook_dir: dir, ansible_verbosity: 0, ansible_playbook_python: controllerPython() });
    expect(vars.groupLayers('prod-eu-2')).toBe(vars.groupLayers('prod-eu-2'));
  });
});
