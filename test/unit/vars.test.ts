import { describe, expect, it } from 'vitest';
import { MAGIC_VARS, mergeVars, type VarLayers } from '../../src/vars/precedence.js';
import { at } from '../helpers/cli.js';

/** Every layer, lowest precedence first, as (name, how to set `v` in it). */
const LAYERS: [string, (layers: VarLayers, value: string) => void][] = [
  ['all group', (l, v) => (l.groupVars[0] = { ...l.groupVars[0], v })],
  ['parent group', (l, v) => (l.groupVars[1] = { ...l.groupVars[1], v })],
  ['child group', (l, v) => (l.groupVars[2] = { ...l.groupVars[2], v })],
  ['cluster', (l, v) => (l.clusterVars = { ...l.clusterVars, v })],
  ['play vars', (l, v) => (l.playVars = { v })],
  ['play vars_files', (l, v) => (l.playVarsFiles = { v })],
  ['outer block', (l, v) => (l.blockVars = [{ v }, l.blockVars?.[1] ?? {}])],
  ['inner block', (l, v) => (l.blockVars = [l.blockVars?.[0] ?? {}, { v }])],
  ['task vars', (l, v) => (l.taskVars = { v })],
  ['facts', (l, v) => (l.facts = { v })],
  ['extra vars', (l, v) => (l.extraVars = { v })],
  ['magic', (l, v) => (l.magic = { v })],
];

function empty(): VarLayers {
  return { groupVars: [{}, {}, {}], clusterVars: {} };
}

describe('mergeVars precedence', () => {
  it.each(LAYERS.map(([name], i) => [name, i] as const))('%s beats every lower layer', (name, i) => {
    const layers = empty();
    for (let j = 0; j <= i; j++) at(LAYERS, j)[1](layers, at(LAYERS, j)[0]);
    expect(mergeVars(layers).v).toBe(name);
  });

  it.each(LAYERS.map(([name], i) => [name, i] as const))('%s loses to every higher layer', (_name, i) => {
    const layers = empty();
    for (let j = i; j < LAYERS.length; j++) at(LAYERS, j)[1](layers, at(LAYERS, j)[0]);
    expect(mergeVars(layers).v).toBe('magic');
    const without = empty();
    for (let j = i; j < LAYERS.length - 1; j++) at(LAYERS, j)[1](without, at(LAYERS, j)[0]);
    expect(mergeVars(without).v).toBe(i === LAYERS.length - 1 ? undefined : 'extra vars');
  });

  it('replaces per top-level key, no deep merge', () => {
    const out = mergeVars({
      groupVars: [{ app: { image: 'a', replicas: 1 }, list: [1, 2] }],
      clusterVars: { app: { replicas: 3 } },
      playVars: { list: [3] },
    });
    expect(out).toEqual({ app: { replicas: 3 }, list: [3] });
  });

  it('keeps keys from every layer and does not mutate inputs', () => {
    const group = { a: 1 };
    const layers: VarLayers = { groupVars: [group], clusterVars: { b: 2 }, taskVars: { c: '{{ a }}' }, extraVars: { a: 9 } };
    expect(mergeVars(layers)).toEqual({ a: 9, b: 2, c: '{{ a }}' });
    expect(group).toEqual({ a: 1 });
  });

  it('treats __proto__ as an ordinary key', () => {
    const evil = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const out = mergeVars({ groupVars: [], clusterVars: evil });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__']);
  });

  it('lists the magic variables', () => {
    expect([...MAGIC_VARS]).toEqual(['cluster_name', 'group_names', 'groups', 'clusters', 'check_mode', 'play_name', 'run_id', 'inventory_dir', 'playbook_dir']);
  });
});
