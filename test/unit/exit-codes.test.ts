// The exit-code table (src/core/exit.ts) is the contract scripts rely on: every code has a meaning,
// no two names share a number, and the numbers are the ones kplay has always used.
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_CODES, type ExitName } from '../../src/core/exit.js';

const names = Object.keys(EXIT_CODES) as ExitName[];

describe('exit codes', () => {
  it('are unique and each is documented', () => {
    const codes = names.map((n) => EXIT_CODES[n].code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const n of names) expect(EXIT_CODES[n].meaning.trim().length, n).toBeGreaterThan(10);
  });

  it('keep their numbers', () => {
    expect({ ...EXIT }).toEqual({ ok: 0, usage: 1, failed: 2, drift: 3, unreachable: 4, refused: 5, crashed: 6, interrupted: 130 });
    for (const n of names) expect(EXIT[n]).toBe(EXIT_CODES[n].code);
  });
});
