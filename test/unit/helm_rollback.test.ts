// Pure parts of helm_release `state: rollback`: which revision, and when it is already done.
import { describe, expect, it } from 'vitest';
import { rollbackTarget, rolledBackTo, sameAsTarget } from '../../src/helm/rollback.js';
import type { ReleaseInfo } from '../../src/helm/release.js';

const rel = (o: Partial<ReleaseInfo>): ReleaseInfo => ({
  name: 'web', namespace: 'web', revision: 1, status: 'deployed', description: 'Install complete', chart: 'webapp', chartVersion: '1.0.0', appVersion: '1.0.0', manifest: 'kind: A\n', config: {}, applyMethod: 'ssa', ...o,
});

describe('rolledBackTo', () => {
  it('reads helm\'s rollback description', () => {
    expect(rolledBackTo('Rollback to 3')).toBe(3);
    expect(rolledBackTo('  Rollback to 12 ')).toBe(12);
    expect(rolledBackTo('Upgrade complete')).toBeUndefined();
    expect(rolledBackTo('')).toBeUndefined();
  });
});

describe('rollbackTarget', () => {
  it('a given revision wins', () => {
    expect(rollbackTarget({ revision: 5, description: 'Rollback to 2' }, [1, 2, 3, 4, 5], 3)).toBe(3);
  });
  it('unset or 0: the previous stored revision', () => {
    expect(rollbackTarget({ revision: 3, description: 'Upgrade complete' }, [1, 2, 3], undefined)).toBe(2);
    expect(rollbackTarget({ revision: 3, description: 'Upgrade complete' }, [1, 2, 3], 0)).toBe(2);
    // pruned history: the newest older revision kept
    expect(rollbackTarget({ revision: 9, description: 'Upgrade complete' }, [5, 7, 9], undefined)).toBe(7);
  });
  it('a rerun after a rollback targets the same revision (idempotent)', () => {
    expect(rollbackTarget({ revision: 3, description: 'Rollback to 1' }, [1, 2, 3], undefined)).toBe(1);
  });
  it('nothing before the only revision', () => {
    expect(rollbackTarget({ revision: 1, description: 'Install complete' }, [1], undefined)).toBeUndefined();
  });
});

describe('sameAsTarget', () => {
  it('same chart, values and manifest, deployed', () => {
    expect(sameAsTarget(rel({ revision: 3, config: { a: 1 } }), rel({ revision: 1, status: 'superseded', config: { a: 1 } }))).toBe(true);
  });
  it('differs by values, chart version, manifest or a failed current revision', () => {
    const target = rel({ status: 'superseded', config: { a: 1 } });
    expect(sameAsTarget(rel({ config: { a: 2 } }), target)).toBe(false);
    expect(sameAsTarget(rel({ config: { a: 1 }, chartVersion: '1.1.0' }), target)).toBe(false);
    expect(sameAsTarget(rel({ config: { a: 1 }, manifest: 'kind: B\n' }), target)).toBe(false);
    expect(sameAsTarget(rel({ config: { a: 1 }, status: 'failed' }), target)).toBe(false);
  });
});
