/**
 * Python's `set` operations as Ansible's `union`/`intersect`/`difference`/`symmetric_difference`
 * filters run them (`list(set(a) | set(b))`), including the ORDER of the resulting list.
 *
 * The order of a Python set is the order of its hash table. For numbers (and booleans) hashes are
 * deterministic, so the table of CPython 3.11's `setobject.c` is emulated exactly and the result
 * is in the order ansible-core gives. Strings and `None` hash differently in every Python process
 * (hash randomisation), so Ansible's order for them is not reproducible: kplay then keeps the
 * order in which items are first met (documented difference). Lists and dicts are unhashable: the
 * callers fall back to Ansible's list-based versions, as ansible-core does on its TypeError.
 */
import { PyFloat, pyEq } from '../values.js';

const MOD = (1n << 61n) - 1n;
const BITS = 61n;
const U64 = (1n << 64n) - 1n;
const MINSIZE = 8;
const LINEAR_PROBES = 9;

/** Python's `hash()` of an int or float, as an unsigned 64-bit value (CPython's size_t view). */
export function pyHashNumber(n: number): bigint {
  let h: bigint;
  if (Number.isInteger(n)) {
    const b = BigInt(n);
    const a = b < 0n ? -b : b;
    h = a % MOD;
    if (b < 0n) h = -h;
  } else if (!Number.isFinite(n)) {
    h = n > 0 ? 314159n : -314159n;
  } else {
    h = hashDouble(n);
  }
  if (h === -1n) h = -2n;
  return h & U64;
}

function frexp(v: number): [number, number] {
  if (v === 0) return [0, 0];
  let e = Math.max(-1073, Math.floor(Math.log2(Math.abs(v))) + 1);
  let m = v * 2 ** -e;
  while (Math.abs(m) < 0.5) {
    m *= 2;
    e--;
  }
  while (Math.abs(m) >= 1) {
    m /= 2;
    e++;
  }
  return [m, e];
}

/** CPython's `_Py_HashDouble` for finite non-integral values (signed result). */
function hashDouble(v: number): bigint {
  const fr = frexp(v);
  let m = fr[0];
  const e = fr[1];
  let sign = 1n;
  if (m < 0) {
    sign = -1n;
    m = -m;
  }
  let x = 0n;
  let eb = BigInt(e);
  while (m) {
    x = ((x << 28n) & MOD) | (x >> (BITS - 28n));
    m *= 268435456.0;
    eb -= 28n;
    const y = Math.floor(m);
    m -= y;
    x += BigInt(y);
    if (x >= MOD) x -= MOD;
  }
  eb = eb >= 0n ? eb % BITS : BITS - 1n - ((-1n - eb) % BITS);
  x = ((x << eb) & MOD) | (x >> (BITS - eb));
  return x * sign;
}

/** True for values whose Python hash is deterministic here (numbers and booleans). */
export function hashableNumber(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat;
}

function hashOf(v: unknown): bigint {
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (v instanceof PyFloat) return pyHashNumber(v.value);
  return pyHashNumber(v as number);
}

interface Entry {
  readonly key: unknown;
  readonly hash: bigint;
}

/** An emulated CPython set of numbers. `null` slots are unused; `'dummy'` marks a deleted one. */
class PySet {
  table: (Entry | null | 'dummy')[] = new Array<Entry | null>(MINSIZE).fill(null);
  fill = 0;
  used = 0;

  get mask(): number {
    return this.table.length - 1;
  }

  static from(items: readonly unknown[]): PySet {
    const s = new PySet();
    for (const x of items) s.add(x, hashOf(x));
    return s;
  }

  *entries(): Generator<Entry> {
    for (const e of this.table) if (e !== null && e !== 'dummy') yield e;
  }

  private find(key: unknown, hash: bigint): number {
    const mask = BigInt(this.mask);
    let i = hash & mask;
    let perturb = hash;
    while (true) {
      let idx = Number(i);
      let probes = idx + LINEAR_PROBES <= this.mask ? LINEAR_PROBES : 0;
      do {
        const e = this.table[idx];
        if (e === null) return -1;
        if (e !== 'dummy' && e !== undefined && e.hash === hash && pyEq(e.key, key)) return idx;
        idx++;
      } while (probes-- > 0);
      perturb >>= 5n;
      i = (i * 5n + 1n + perturb) & mask;
    }
  }

  has(key: unknown, hash: bigint): boolean {
    return this.find(key, hash) >= 0;
  }

  add(key: unknown, hash: bigint): void {
    const mask = BigInt(this.mask);
    let i = hash & mask;
    let perturb = hash;
    let freeslot = -1;
    while (true) {
      let idx = Number(i);
      let probes = idx + LINEAR_PROBES <= this.mask ? LINEAR_PROBES : 0;
      do {
        const e = this.table[idx];
        if (e === null) {
          if (freeslot >= 0) {
            this.used++;
            this.table[freeslot] = { key, hash };
            return;
          }
          this.fill++;
          this.used++;
          this.table[idx] = { key, hash };
          if (this.fill * 5 < this.mask * 3) return;
          this.resize(this.used > 50000 ? this.used * 2 : this.used * 4);
          return;
        }
        if (e === 'dummy') {
          freeslot = idx; // CPython 3.11 keeps the last dummy seen, not the first
        } else if (e !== undefined && e.hash === hash && pyEq(e.key, key)) return;
        idx++;
      } while (probes-- > 0);
      perturb >>= 5n;
      i = (i * 5n + 1n + perturb) & mask;
    }
  }

  discard(key: unknown, hash: bigint): boolean {
    const idx = this.find(key, hash);
    if (idx < 0) return false;
    this.table[idx] = 'dummy';
    this.used--;
    return true;
  }

  private static insertClean(table: (Entry | null | 'dummy')[], e: Entry): void {
    const maskN = table.length - 1;
    const mask = BigInt(maskN);
    let i = e.hash & mask;
    let perturb = e.hash;
    while (true) {
      let idx = Number(i);
      if (table[idx] === null) {
        table[idx] = e;
        return;
      }
      if (idx + LINEAR_PROBES <= maskN) {
        for (let j = 0; j < LINEAR_PROBES; j++) {
          idx++;
          if (table[idx] === null) {
            table[idx] = e;
            return;
          }
        }
      }
      perturb >>= 5n;
      i = (i * 5n + 1n + perturb) & mask;
    }
  }

  resize(minused: number): void {
    let size = MINSIZE;
    while (size <= minused) size <<= 1;
    const old = this.table;
    this.table = new Array<Entry | null>(size).fill(null);
    for (const e of old) if (e !== null && e !== 'dummy') PySet.insertClean(this.table, e);
    this.fill = this.used;
  }

  /** `set_merge`: add every entry of `other` (as `set.update(other_set)` and copies do). */
  merge(other: PySet): void {
    if (other === this || other.used === 0) return;
    if ((this.fill + other.used) * 5 >= this.mask * 3) this.resize((this.used + other.used) * 2);
    if (this.fill === 0 && this.mask === other.mask && other.fill === other.used) {
      this.table = other.table.map((e) => (e === 'dummy' ? null : e));
      this.fill = other.fill;
      this.used = other.used;
      return;
    }
    if (this.fill === 0) {
      this.fill = other.used;
      this.used = other.used;
      for (const e of other.entries()) PySet.insertClean(this.table, e);
      return;
    }
    for (const e of other.entries()) this.add(e.key, e.hash);
  }

  copy(): PySet {
    const s = new PySet();
    s.merge(this);
    return s;
  }

  keys(): unknown[] {
    return [...this.entries()].map((e) => e.key);
  }
}

/** `list(set(a) | set(b))` for numbers. */
export function setUnion(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const r = PySet.from(a).copy();
  r.merge(PySet.from(b));
  return r.keys();
}

/** `list(set(a) & set(b))` for numbers. */
export function setIntersection(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  let so = PySet.from(a);
  let other = PySet.from(b);
  if (other.used > so.used) [so, other] = [other, so];
  const r = new PySet();
  for (const e of other.entries()) if (so.has(e.key, e.hash)) r.add(e.key, e.hash);
  return r.keys();
}

/** `list(set(a) - set(b))` for numbers. */
export function setDifference(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const so = PySet.from(a);
  const other = PySet.from(b);
  if (so.used >> 2 > other.used) {
    const r = so.copy();
    for (const e of other.entries()) r.discard(e.key, e.hash);
    return r.keys();
  }
  const r = new PySet();
  for (const e of so.entries()) if (!other.has(e.key, e.hash)) r.add(e.key, e.hash);
  return r.keys();
}

/** `list(set(a) ^ set(b))` for numbers. */
export function setSymmetricDifference(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  const so = PySet.from(a);
  const r = PySet.from(b).copy();
  for (const e of so.entries()) if (!r.discard(e.key, e.hash)) r.add(e.key, e.hash);
  return r.keys();
}
