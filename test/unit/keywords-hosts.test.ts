// A play's `hosts:` that matches nothing: skipped with a warning as ansible-playbook does
// (src/playbook/targets.ts playClusters), except a malformed pattern and an absent `localhost`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playClusters } from '../../src/playbook/targets.js';
import { loadInventory } from '../../src/inventory/resolve.js';
import type { Inventory } from '../../src/inventory/types.js';

describe('playClusters', () => {
  let dir: string;
  let inv: Inventory;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-hosts-'));
    writeFileSync(path.join(dir, 'inventory.yml'), 'all:\n  children:\n    g1:\n      clusters: { c1: {}, c2: {} }\n');
    inv = await loadInventory(path.join(dir, 'inventory.yml'), { cwd: dir, env: {} });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('selects the clusters of a pattern', () => {
    expect(playClusters(inv, 'g1')).toEqual({ clusters: ['c1', 'c2'], unmatched: [] });
    expect(playClusters(inv, ['c2'])).toEqual({ clusters: ['c2'], unmatched: [] });
  });
  it('selects nothing for a name that matches nothing, or an empty intersection (the play is skipped)', () => {
    expect(playClusters(inv, 'no_such_group')).toEqual({ clusters: [], unmatched: [{ text: 'no_such_group' }] });
    expect(playClusters(inv, 'g1:!c1:!c2')).toEqual({ clusters: [], unmatched: [] });
  });
  it('runs the terms that match and names the others, as ansible-playbook warns and goes on', () => {
    expect(playClusters(inv, 'c2:typo:c1')).toEqual({ clusters: ['c2', 'c1'], unmatched: [{ text: 'typo' }] });
    expect(playClusters(inv, 'g2:c1')).toEqual({ clusters: ['c1'], unmatched: [{ text: 'g2', hint: "did you mean 'g1' or 'c2'?" }] });
    // short hexadecimal-looking names are no IPv6 address (a window once skipped c1:c2 whole)
    expect(playClusters(inv, 'c1:c2').clusters).toEqual(['c1', 'c2']);
  });
  it('an absent localhost is still an error (skipping would run nothing without saying so)', () => {
    expect(() => playClusters(inv, 'localhost')).toThrow(/localhost/);
  });
});
