// Host patterns against ansible-core itself: for generated patterns (unions, `&`, `!`, subscripts,
// globs, `~regex`, IPv4/IPv6 with and without ports, short hexadecimal-looking names such as `c1`,
// `db`, `fe`, `cafe`, commas, spaces, YAML lists), kplay splits them into the terms
// `split_host_pattern` finds, selects the clusters `InventoryManager.get_hosts` selects in the same
// order, and names the same unmatched terms ansible-core warns about ("Could not match supplied host
// pattern, ignoring: …"). The reference runs in the venv of test/bench/install.sh
// (host-patterns/reference.py).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectClusters } from '../../src/inventory/patterns.js';
import { splitHostPattern } from '../../src/inventory/split-pattern.js';
import { loadInventory } from '../../src/inventory/resolve.js';
import type { Inventory } from '../../src/inventory/types.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const REFERENCE = fileURLToPath(new URL('./host-patterns/reference.py', import.meta.url));

/** Hosts and groups named like hexadecimal groups of an IPv6 address, an IPv4 address, nesting two levels deep. */
const INVENTORY = `all:
  hosts:
    c1:
    lone:
    10.0.0.1:
  children:
    db:
      hosts: { c2: , fe: }
    web:
      hosts: { c3: , c4: , a1: }
      children:
        edge:
          hosts: { b2: , cafe: }
    fe80:
      hosts: { ab12: }
    prod:
      children: { web: , db: }
    be:
      hosts: { c1: , ab12: }
`;

type Pattern = string | string[];
interface Reference {
  split: string[];
  hosts: string[] | null;
  error: string | null;
  warnings: string[];
}

/** Terms: names and groups that look hexadecimal, globs, regexes, subscripts, addresses with ports, typos. */
const TERMS = [
  'c1', 'c2', 'c3', 'c4', 'a1', 'b2', 'db', 'fe', 'be', 'cafe', 'ab12', 'fe80', 'web', 'edge', 'prod', 'all', 'lone', 'ungrouped',
  '*', 'c*', '?2', '[ab]*', 'fe*', '*a*', '~c[12]', '~(db|fe)$', '~.*e', 'web[0]', 'web[-1]', 'web[0:1]', 'web[1:]', 'prod[2:3]', 'db[1]',
  '10.0.0.1', '10.0.0.*', 'nosuch', 'dead', 'beef', 'c9', 'web.example',
];
/** Whole patterns that are one address (or look like one), or stress the splitter. */
const SINGLES: Pattern[] = [
  'c1:c2:c4', 'db:fe', 'a1:b2:c3', 'c1:c2', 'fe80::1', '::1', '::', 'fe80::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7', 'a:b:c:d:e:f:a:b',
  'cafe:be:ab12', 'host:22', 'c1:22', '10.0.0.1:22', '[::1]:22', '[c1]:22', '10.0.0.1', 'web[0:1]:db', 'web[0:1]', 'c1 c2', ' c1 , c2 ',
  'c1,,c2', ':c1:', 'c1:', ',', 'c1::c2', 'db::1', 'all:!db:&web', '!db', '&prod', 'prod:&web:!c3', 'fe80::1:c1', 'c1,fe80::1',
  ['c1:c2', 'db'], ['fe80::1', 'c3'], ['a1', '!c1:c2'],
  // outside ASCII: word characters as Python's re.UNICODE \w (letters, digits, marks), not others
  'zürich:22', 'zürich:db', 'köln-1', 'cafe\u0301:c1', 'ḟé80::1', 'web\u00b2:22', 'c1:«x»', 'müller_:c2', '١٢:c1',
];

/** A deterministic generator (mulberry32), so a failure names a pattern that can be rerun. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(n: number): Pattern[] {
  const r = rng(50);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const out: Pattern[] = [];
  for (let i = 0; i < n; i++) {
    const terms = Array.from({ length: 1 + Math.floor(r() * 4) }, () => {
      const op = r() < 0.15 ? '&' : r() < 0.2 ? '!' : '';
      return op + pick(TERMS);
    });
    const sep = pick([':', ',', ', ', ' : ']);
    out.push(r() < 0.15 ? terms : terms.join(sep));
  }
  return out;
}

const PATTERNS: Pattern[] = [...SINGLES, ...generate(400)];

describe('host patterns: kplay vs ansible-core', () => {
  let dir: string;
  let inv: Inventory;
  let ref: Reference[];
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-host-patterns-'));
    const file = path.join(dir, 'hosts.yml');
    writeFileSync(file, INVENTORY);
    inv = await loadInventory(file, { cwd: dir, env: {} });
    const out = execFileSync(path.join(VENV, 'bin/python'), [REFERENCE], {
      input: JSON.stringify({ inventory: file, patterns: PATTERNS }),
      encoding: 'utf8',
      env: { ...process.env, ANSIBLE_HOME: path.join(dir, '.ansible'), ANSIBLE_LOCAL_TEMP: path.join(dir, '.tmp') },
      maxBuffer: 64 * 1024 * 1024,
    });
    ref = JSON.parse(out) as Reference[];
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the reference answered every pattern, and the examples mean what they say', () => {
    expect(ref).toHaveLength(PATTERNS.length);
    // the defect: a union of short hex-looking names is no IPv6 address
    expect(ref[0]).toMatchObject({ split: ['c1', 'c2', 'c4'], hosts: ['c1', 'c2', 'c4'] });
    expect(ref[4]?.split).toEqual(['fe80::1']);
  });

  it('splits every pattern into the terms split_host_pattern finds', () => {
    const diffs = PATTERNS.map((p, i) => ({ p, want: ref[i]?.split, got: splitHostPattern(p) })).filter((d) => JSON.stringify(d.want) !== JSON.stringify(d.got));
    expect(diffs).toEqual([]);
  });

  it('selects the same clusters in the same order, and warns of the same terms', () => {
    const diffs: unknown[] = [];
    PATTERNS.forEach((p, i) => {
      const want = ref[i] as Reference;
      // an empty pattern is refused at load by both ("Hosts list cannot be empty"); get_hosts itself reads it as all
      if (want.split.length === 0) return;
      // ansible-core makes an implicit host for `::1` (and `localhost`, `127.0.0.1`) on demand; kplay
      // adds its implicit localhost before the run when a play names one (test/unit/cli-localhost.test.ts)
      if (want.hosts?.some((h) => ['localhost', '127.0.0.1', '::1'].includes(h))) return;
      let got: { hosts: string[] | null; warnings: string[]; error: boolean };
      try {
        const s = selectClusters(inv, p);
        got = { hosts: s.clusters, warnings: s.unmatched.map((t) => t.text), error: false };
      } catch {
        got = { hosts: null, warnings: [], error: true };
      }
      const expected = { hosts: want.hosts, warnings: want.error ? [] : want.warnings, error: want.error !== null };
      if (got.error !== expected.error || (!got.error && JSON.stringify([got.hosts, got.warnings]) !== JSON.stringify([expected.hosts, expected.warnings]))) {
        diffs.push({ pattern: p, kplay: got, ansible: { ...expected, message: want.error } });
      }
    });
    expect(diffs).toEqual([]);
  });
});
