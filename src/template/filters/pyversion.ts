/**
 * The version classes of ansible-core's `version` test: LooseVersion and StrictVersion
 * (`ansible.module_utils.compat.version`), SemanticVersion (`ansible.utils.version`) and PEP 440
 * (`packaging.version`), each compared as Python compares them (including the TypeErrors
 * LooseVersion raises comparing a number with a word).
 */
import { ExprError } from '../values.js';

/** A comparison of two versions: negative, zero or positive. */
type Cmp = (a: string, b: string) => number;

function cmpNum(a: number, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Python's list comparison over ints and strings (TypeError between an int and a str). */
function cmpMixed(a: readonly (number | string)[], b: readonly (number | string)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as number | string;
    const y = b[i] as number | string;
    if (x === y) continue;
    if (typeof x !== typeof y) {
      throw new ExprError(`'<' not supported between instances of '${typeof x === 'number' ? 'int' : 'str'}' and '${typeof y === 'number' ? 'int' : 'str'}'`);
    }
    return x < y ? -1 : 1;
  }
  return cmpNum(a.length, b.length);
}

function loose(v: string): (number | string)[] {
  return v
    .split(/(\d+|[a-z]+|\.)/)
    .filter((x) => x !== '' && x !== '.')
    .map((x) => (/^\d+$/.test(x) ? Number(x) : x));
}

/** LooseVersion. */
export const compareLoose: Cmp = (a, b) => {
  const x = loose(a);
  const y = loose(b);
  if (x.length === y.length && x.every((c, i) => c === y[i])) return 0;
  return cmpMixed(x, y);
};

function strict(v: string): { version: number[]; pre: [string, number] | null } {
  const m = /^(\d+)\.(\d+)(\.(\d+))?([ab](\d+))?\n?$/.exec(v);
  if (!m) throw new ExprError(`invalid version number '${v}'`);
  const version = [Number(m[1]), Number(m[2]), m[4] !== undefined ? Number(m[4]) : 0];
  return { version, pre: m[5] ? [m[5][0] ?? '', Number(m[6])] : null };
}

/** StrictVersion. */
export const compareStrict: Cmp = (a, b) => {
  const x = strict(a);
  const y = strict(b);
  const c = cmpMixed(x.version, y.version);
  if (c !== 0) return c;
  if (!x.pre && !y.pre) return 0;
  if (x.pre && !y.pre) return -1;
  if (!x.pre && y.pre) return 1;
  return cmpMixed(x.pre ?? [], y.pre ?? []);
};

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\n?$/;

function semver(v: string): { core: number[]; pre: (number | string)[] } {
  const m = SEMVER.exec(v);
  if (!m) throw new ExprError(`invalid semantic version '${v}'`);
  return {
    core: [Number(m[1]), Number(m[2]), Number(m[3])],
    pre: m[4] ? m[4].split('.').map((x) => (/^\d+$/.test(x) ? Number(x) : x)) : [],
  };
}

/** SemanticVersion: numbers sort before words in prereleases; build metadata is ignored. */
export const compareSemver: Cmp = (a, b) => {
  const x = semver(a);
  const y = semver(b);
  const c = cmpMixed(x.core, y.core);
  if (c !== 0) return c;
  if (x.pre.length === 0 && y.pre.length === 0) return 0;
  if (x.pre.length > 0 && y.pre.length === 0) return -1;
  if (x.pre.length === 0 && y.pre.length > 0) return 1;
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i] as number | string;
    const q = y.pre[i] as number | string;
    if (p === q) continue;
    if (typeof p === 'number' && typeof q === 'string') return -1;
    if (typeof p === 'string' && typeof q === 'number') return 1;
    return p < q ? -1 : 1;
  }
  return cmpNum(x.pre.length, y.pre.length);
};

const PEP440 =
  /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d+)?)?(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?(?:[-_.]?(dev)[-_.]?(\d+)?)?(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$/i;

/** A sort key of packaging's `Version` (epoch, release, pre, post, dev, local). */
function pep440Key(v: string): (number | string | (number | string)[])[] {
  const m = PEP440.exec(v);
  if (!m) throw new ExprError(`Invalid version: '${v}'`);
  const epoch = m[1] ? Number(m[1]) : 0;
  const release = (m[2] ?? '0').split('.').map(Number);
  while (release.length > 1 && release[release.length - 1] === 0) release.pop();
  const preLetter = m[3]?.toLowerCase();
  const preMap: Record<string, string> = { alpha: 'a', a: 'a', beta: 'b', b: 'b', c: 'rc', rc: 'rc', pre: 'rc', preview: 'rc' };
  const pre = preLetter ? [preMap[preLetter] ?? preLetter, Number(m[4] ?? 0)] : null;
  const post = m[5] !== undefined ? Number(m[5]) : m[6] ? Number(m[7] ?? 0) : null;
  const dev = m[8] ? Number(m[9] ?? 0) : null;
  const INF = Number.POSITIVE_INFINITY;
  const NEG = Number.NEGATIVE_INFINITY;
  // packaging: a dev release without pre/post sorts before the pre-releases
  const preKey: (number | string)[] = pre === null && post === null && dev !== null ? [NEG] : pre === null ? [INF] : pre;
  const postKey: (number | string)[] = post === null ? [NEG] : [post];
  const devKey: (number | string)[] = dev === null ? [INF] : [dev];
  const local = m[10] ? m[10].toLowerCase().split(/[-_.]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x)) : [NEG];
  return [epoch, release, preKey, postKey, devKey, local];
}

function cmpKey(a: unknown, b: unknown): number {
  if (a === b) return 0;
  // packaging's Infinity / NegativeInfinity compare above / below everything
  if (a === Number.NEGATIVE_INFINITY || b === Number.POSITIVE_INFINITY) return -1;
  if (a === Number.POSITIVE_INFINITY || b === Number.NEGATIVE_INFINITY) return 1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = cmpKey(a[i], b[i]);
      if (c !== 0) return c;
    }
    return cmpNum(a.length, b.length);
  }
  if (typeof a === 'number' && typeof b === 'number') return cmpNum(a, b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  // local segments: numbers sort after words
  return typeof a === 'number' ? 1 : -1;
}

/** PEP 440 (`packaging.version.Version`). */
export const comparePep440: Cmp = (a, b) => {
  const ka = pep440Key(a);
  const kb = pep440Key(b);
  // packaging ignores trailing zeros of the release for comparison
  return cmpKey(ka, kb);
};

/** The comparison for a `version_type` (`loose`, `strict`, `semver`/`semantic`, `pep440`). */
export const VERSION_TYPES: Readonly<Record<string, Cmp>> = {
  loose: compareLoose,
  strict: compareStrict,
  semver: compareSemver,
  semantic: compareSemver,
  pep440: comparePep440,
};
