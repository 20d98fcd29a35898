// One translation of shell-style patterns (src/core/fnmatch.ts, Python's fnmatch) behind every
// place kplay takes one: host patterns, the fileglob lookup, and the SDK's fnmatchRegex (find,
// setup). The expected matches are Python 3.11's `fnmatch.fnmatchcase` (ansible-core compiles
// `fnmatch.translate` for host patterns; `glob` uses it per path segment), printed by:
//   for p in PATTERNS: print(p, [n for n in NAMES if fnmatch.fnmatchcase(n, p)])
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fnmatchRegex } from '../../src/core/fnmatch.js';
import { matchClusters } from '../../src/inventory/patterns.js';
import { splitHostPattern } from '../../src/inventory/split-pattern.js';
import { loadInventory } from '../../src/inventory/resolve.js';
import { fnmatchRegex as sdkFnmatchRegex } from '../../src/sdk/index.js';
import { LOOKUPS } from '../../src/template/lookups.js';
import type { PluginContext } from '../../src/template/plugins.js';

const NAMES = ['', 'a', 'x', ']', '!', '^', '-', 'b', '\\', 'a*', 'a\\*', 'ab', 'aXb', 'a\nb', '[]', '[!]', 'a[', '[', 'bx', 'web-1', 'web-1a', 'aaab', 'z'];

/** Pattern → the NAMES Python's fnmatchcase matches. */
const PYTHON: [string, string[]][] = [
  ['*', NAMES],
  ['?', ['a', 'x', ']', '!', '^', '-', 'b', '\\', '[', 'z']],
  ['a*b', ['ab', 'aXb', 'a\nb', 'aaab']],
  ['*a*a*a*b', ['aaab']],
  ['[!x]', ['a', ']', '!', '^', '-', 'b', '\\', '[', 'z']],
  ['[]', ['[]']],
  ['[]]', [']']],
  ['[]a]', ['a', ']']],
  ['[!]]', ['a', 'x', '!', '^', '-', 'b', '\\', '[', 'z']],
  ['[!]a]', ['x', '!', '^', '-', 'b', '\\', '[', 'z']],
  ['[!]', ['[!]']],
  ['[^x]', ['x', '^']],
  ['[z-a]', []],
  ['[!z-a]', ['a', 'x', ']', '!', '^', '-', 'b', '\\', '[', 'z']],
  ['[a-]', ['a', '-']],
  ['[-a]', ['a', '-']],
  ['[a--b]', ['b']],
  ['[]-a]', ['a', ']', '^']],
  ['[\\]', ['\\']],
  ['a\\*', ['a\\*']],
  ['[[]', ['[']],
  ['a[', ['a[']],
  ['[a-c]x', ['bx']],
  ['web-[0-9]*', ['web-1', 'web-1a']],
];

describe('fnmatchRegex (Python fnmatch.fnmatchcase)', () => {
  it.each(PYTHON)('%j matches what Python matches', (pattern, want) => {
    const re = fnmatchRegex(pattern);
    expect(NAMES.filter((n) => re.test(n))).toEqual(want);
  });

  it('is the function the SDK exports (find, setup)', () => {
    expect(sdkFnmatchRegex).toBe(fnmatchRegex);
  });

  it('counts code points, not UTF-16 units, and keeps many stars linear', () => {
    expect(fnmatchRegex('?').test('😀')).toBe(true);
    expect(fnmatchRegex('[é-😀]').test('😀')).toBe(true);
    // exponential backtracking would run for hours (far past the test's timeout); the atomic form answers at once
    expect(fnmatchRegex('*a*a*a*a*a*a*a*a*b').test('a'.repeat(200))).toBe(false);
  });
});

describe('host patterns use it', () => {
  const NAME = /^[A-Za-z0-9_.-]+$/;
  const clusters = NAMES.filter((n) => NAME.test(n));
  const dir = mkdtempSync(path.join(tmpdir(), 'kplay-fnmatch-inv-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'inv.yml');
  writeFileSync(file, `all:\n  clusters:\n${clusters.map((c) => `    '${c}': { context: ctx }`).join('\n')}\n`);
  const TERM = /^[A-Za-z0-9_.\-*?[\]!^]+$/;

  // only globs that ansible-core's split_host_pattern keeps whole reach the matcher (`[]a]` is cut to `[]a` there)
  const whole = (p: string): boolean => JSON.stringify(splitHostPattern(p)) === JSON.stringify([p]);
  it.each(PYTHON.filter(([p]) => TERM.test(p) && !p.startsWith('!') && whole(p)))('%j selects the clusters Python matches', async (pattern, want) => {
    const inv = await loadInventory(file, { cwd: dir, env: {} });
    const expected = clusters.filter((c) => want.includes(c));
    if (expected.length === 0) expect(() => matchClusters(inv, pattern)).toThrow(/matches no cluster or group name/);
    else expect(matchClusters(inv, pattern)).toEqual(expected);
  });
});

describe('the fileglob lookup uses it', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'kplay-fnmatch-glob-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const files = NAMES.filter((n) => n !== '' && !n.startsWith('.'));
  for (const n of files) writeFileSync(path.join(root, n), n);
  const ctx: PluginContext = {
    variable: () => undefined,
    variableNames: () => [],
    render: (t) => t,
    searchPaths: [root],
    fileRoots: [root],
    env: {},
    addSecret: () => undefined,
  };
  const fileglob = LOOKUPS.get('fileglob');

  it.each(PYTHON)('%j finds the files Python matches', (pattern, want) => {
    if (!fileglob) throw new Error('no fileglob lookup');
    const found = (fileglob.fn([pattern], {}, ctx) as string[]).map((f) => path.basename(f));
    expect(found.sort()).toEqual(want.filter((n) => files.includes(n)).sort());
  });
});
