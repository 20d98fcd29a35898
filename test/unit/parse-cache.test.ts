// The parse cache (src/load/parse-cache.ts): a large manifest file parsed before by the same build
// is read back instead of parsed; never a file with a Secret, never across builds, never a value
// JSON would not give back; a damaged entry is parsed again; the oldest entries go past the bound.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSources } from '../../src/k8s/manifests.js';
import { cachedParse, MAX_ENTRIES, MIN_CACHED_BYTES, parseCacheOf, type ParseCache } from '../../src/load/parse-cache.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'kplay-parse-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const big = (extra = ''): string => `${'# padding\n'.repeat(MIN_CACHED_BYTES / 10)}a: 1\nb: [x, y]\n${extra}`;
const isAny = (v: unknown): v is unknown => v !== undefined;
const entries = (d: string): string[] => readdirSync(d).filter((n) => n.endsWith('.json'));

describe('cachedParse', () => {
  it('parses once per build and text; the second run reads the entry back', () => {
    const cache: ParseCache = { dir: path.join(dir, 'm'), build: 'b1' };
    let parses = 0;
    const parse = (t: string): unknown => (parses++, { len: t.length, list: [1, 'two', null, true] });
    const first = cachedParse(cache, big(), parse, isAny, () => true);
    const again = cachedParse(cache, big(), parse, isAny, () => true);
    expect(parses).toBe(1);
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    // private to the user
    expect(statSync(cache.dir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(cache.dir, entries(cache.dir)[0] ?? '')).mode & 0o777).toBe(0o600);
    // another text, another build: parsed
    cachedParse(cache, big('c: 2\n'), parse, isAny, () => true);
    cachedParse({ ...cache, build: 'b2' }, big(), parse, isAny, () => true);
    expect(parses).toBe(3);
  });

  it('does not cache small texts, what the caller keeps out, or values JSON would change', () => {
    const cache: ParseCache = { dir: path.join(dir, 'm'), build: 'b1' };
    let parses = 0;
    cachedParse(cache, 'a: 1\n', () => (parses++, { a: 1 }), isAny, () => true);
    cachedParse(cache, big(), () => (parses++, { secret: 'x' }), isAny, () => false);
    for (const odd of [Number.NaN, Number.POSITIVE_INFINITY, -0, new Date(0)]) cachedParse(cache, big(String(odd)), () => (parses++, { v: [odd] }), isAny, () => true);
    expect(parses).toBe(6);
    expect(() => entries(cache.dir)).toThrow(); // never created
  });

  it('parses again when the entry is damaged or not what `valid` accepts', () => {
    const cache: ParseCache = { dir: path.join(dir, 'm'), build: 'b1' };
    let parses = 0;
    const parse = (): number[] => (parses++, [1, 2]);
    const valid = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === 'number');
    cachedParse(cache, big(), parse, valid, () => true);
    const file = path.join(cache.dir, entries(cache.dir)[0] ?? '');
    writeFileSync(file, '{"truncated":');
    expect(cachedParse(cache, big(), parse, valid, () => true)).toEqual([1, 2]);
    writeFileSync(file, '["not", "numbers"]');
    expect(cachedParse(cache, big(), parse, valid, () => true)).toEqual([1, 2]);
    expect(parses).toBe(3);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([1, 2]); // written again
  });

  it('a directory it cannot write to: parsed every time, no error', () => {
    if (process.getuid?.() === 0) {
      // root writes anywhere: use a path under a file instead
      writeFileSync(path.join(dir, 'file'), '');
    } else chmodSync(dir, 0o500);
    const cache: ParseCache = { dir: path.join(dir, 'file', 'm'), build: 'b1' };
    let parses = 0;
    expect(cachedParse(cache, big(), () => (parses++, [1]), isAny, () => true)).toEqual([1]);
    expect(cachedParse(cache, big(), () => (parses++, [1]), isAny, () => true)).toEqual([1]);
    expect(parses).toBe(2);
  });

  it(`keeps at most ${MAX_ENTRIES} entries, the most recently written`, () => {
    const cache: ParseCache = { dir: path.join(dir, 'm'), build: 'b1' };
    for (let i = 0; i < MAX_ENTRIES + 5; i++) cachedParse(cache, big(`n: ${i}\n`), () => [i], isAny, () => true);
    expect(entries(cache.dir)).toHaveLength(MAX_ENTRIES);
    let parses = 0;
    cachedParse(cache, big(`n: ${MAX_ENTRIES + 4}\n`), () => (parses++, [0]), isAny, () => true);
    expect(parses).toBe(0);
  });

  it('is off without a bundled build id (running from the sources, as here)', () => {
    expect(parseCacheOf({ XDG_CACHE_HOME: dir })).toBeUndefined();
  });
});

describe('loadSources with the parse cache', () => {
  const deployment = (i: number): string => `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  key: "${'v'.repeat(200)}"\n`;
  const set = Array.from({ length: 100 }, (_, i) => deployment(i)).join('');

  it('reads a large set back as parsed; a set with a Secret is never written to the cache', async () => {
    const cache: ParseCache = { dir: path.join(dir, 'cache'), build: 'b1' };
    writeFileSync(path.join(dir, 'set.yaml'), set);
    const first = await loadSources('set.yaml', dir, cache);
    expect(entries(cache.dir)).toHaveLength(1);
    expect(await loadSources('set.yaml', dir, cache)).toEqual(first);
    expect(first).toHaveLength(100);
    writeFileSync(path.join(dir, 'secret.yaml'), `${set}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  password: hunter2\n`);
    expect(await loadSources('secret.yaml', dir, cache)).toHaveLength(101);
    expect(entries(cache.dir)).toHaveLength(1);
    expect(readdirSync(cache.dir).some((n) => readFileSync(path.join(cache.dir, n), 'utf8').includes('hunter2'))).toBe(false);
  });

  it('errors name the file, as without the cache', async () => {
    const cache: ParseCache = { dir: path.join(dir, 'cache'), build: 'b1' };
    writeFileSync(path.join(dir, 'bad.yaml'), `${set}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n`);
    await expect(loadSources('bad.yaml', dir, cache)).rejects.toThrow(/bad\.yaml document 101: ConfigMap has no metadata\.name/);
  });
});
