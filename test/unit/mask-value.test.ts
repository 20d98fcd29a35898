// Masker.maskValue: every string under a value is masked; what holds no secret is returned as it
// is (no copy), what holds one is a copy (the value given is never changed); anything but plain
// data becomes a plain object of its own fields, masked.
import { describe, expect, it } from 'vitest';
import { MASK, Masker } from '../../src/core/mask.js';

describe('Masker.maskValue', () => {
  const masker = (): Masker => {
    const m = new Masker();
    m.add('hunter2-secret');
    return m;
  };

  it('masks strings at any depth, in lists and maps, and leaves the given value unchanged', () => {
    const given = { a: { b: ['x', 'pw=hunter2-secret', { c: 'hunter2-secret' }], n: 1, z: null }, other: { d: 'plain' } };
    const before = JSON.stringify(given);
    const out = masker().maskValue(given);
    expect(out).toEqual({ a: { b: ['x', `pw=${MASK}`, { c: MASK }], n: 1, z: null }, other: { d: 'plain' } });
    expect(JSON.stringify(given)).toBe(before);
    expect(out).not.toBe(given);
    expect(out.a.b).not.toBe(given.a.b);
    // the untouched branch is shared, not copied
    expect(out.other).toBe(given.other);
  });

  it('returns a value with nothing to mask as it is, with or without secrets registered', () => {
    const given = { spec: { versions: [{ name: 'v1', schema: { type: 'object' } }] } };
    expect(masker().maskValue(given)).toBe(given);
    expect(new Masker().maskValue(given)).toBe(given);
  });

  it('masks the base64 form and never hands back an Error or class unmasked', () => {
    const m = masker();
    const b64 = Buffer.from('hunter2-secret').toString('base64');
    expect(m.maskValue({ data: { key: b64 } })).toEqual({ data: { key: MASK } });
    const err = Object.assign(new Error('boom'), { detail: 'token hunter2-secret' });
    const out = m.maskValue({ error: err }) as { error: unknown };
    expect(out.error).not.toBeInstanceOf(Error);
    expect(out.error).toEqual({ detail: `token ${MASK}` });
  });
});
