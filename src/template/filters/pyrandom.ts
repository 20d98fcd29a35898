/**
 * Python's `random.Random(seed)` (Mersenne Twister MT19937 with CPython's seeding), so that
 * `random(seed=inventory_hostname)` and `shuffle(seed=…)` give the numbers ansible-core gives:
 * `randrange`, `choice` and `shuffle` draw exactly as CPython 3.11 does.
 */
import { createHash, randomInt } from 'node:crypto';
import { ExprError, PyFloat, typeName } from '../values.js';
import { pyHashNumber } from './pyset.js';

const N = 624;
const M = 397;

/** A seeded generator with CPython's algorithms. */
export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  constructor(seed: unknown) {
    this.initByArray(seedKey(seed));
  }

  private initGenrand(s: number): void {
    this.mt[0] = s >>> 0;
    for (this.mti = 1; this.mti < N; this.mti++) {
      const prev = this.mt[this.mti - 1] ?? 0;
      const x = prev ^ (prev >>> 30);
      this.mt[this.mti] = (Math.imul(1812433253, x) + this.mti) >>> 0;
    }
  }

  private initByArray(key: readonly number[]): void {
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    const len = key.length;
    for (let k = N > len ? N : len; k > 0; k--) {
      const prev = this.mt[i - 1] ?? 0;
      const x = prev ^ (prev >>> 30);
      this.mt[i] = (((this.mt[i] ?? 0) ^ Math.imul(x, 1664525)) + (key[j] ?? 0) + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        this.mt[0] = this.mt[N - 1] ?? 0;
        i = 1;
      }
      if (j >= len) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = this.mt[i - 1] ?? 0;
      const x = prev ^ (prev >>> 30);
      this.mt[i] = (((this.mt[i] ?? 0) ^ Math.imul(x, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        this.mt[0] = this.mt[N - 1] ?? 0;
        i = 1;
      }
    }
    this.mt[0] = 0x80000000;
  }

  /** genrand_uint32. */
  next32(): number {
    const mag01 = [0, 0x9908b0df];
    if (this.mti >= N) {
      let kk = 0;
      for (; kk < N - M; kk++) {
        const y = ((this.mt[kk] ?? 0) & 0x80000000) | ((this.mt[kk + 1] ?? 0) & 0x7fffffff);
        this.mt[kk] = (this.mt[kk + M] ?? 0) ^ (y >>> 1) ^ (mag01[y & 1] ?? 0);
      }
      for (; kk < N - 1; kk++) {
        const y = ((this.mt[kk] ?? 0) & 0x80000000) | ((this.mt[kk + 1] ?? 0) & 0x7fffffff);
        this.mt[kk] = (this.mt[kk + (M - N)] ?? 0) ^ (y >>> 1) ^ (mag01[y & 1] ?? 0);
      }
      const y = ((this.mt[N - 1] ?? 0) & 0x80000000) | ((this.mt[0] ?? 0) & 0x7fffffff);
      this.mt[N - 1] = (this.mt[M - 1] ?? 0) ^ (y >>> 1) ^ (mag01[y & 1] ?? 0);
      this.mti = 0;
    }
    let y = this.mt[this.mti++] ?? 0;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `getrandbits(k)`. */
  getrandbits(k: number): bigint {
    if (k <= 32) return BigInt(this.next32() >>> (32 - k));
    let out = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32) {
      let r = this.next32();
      if (left < 32) r >>>= 32 - left;
      out |= BigInt(r) << shift;
      shift += 32n;
    }
    return out;
  }

  /** `_randbelow(n)` for n > 0. */
  randbelow(n: number): number {
    const k = n.toString(2).length;
    let r = this.getrandbits(k);
    while (r >= BigInt(n)) r = this.getrandbits(k);
    return Number(r);
  }

  /** `randrange(start, stop, step)`. */
  randrange(start: number, stop: number, step: number): number {
    const width = stop - start;
    if (step === 1) {
      if (width > 0) return start + this.randbelow(width);
      throw new ExprError(`empty range for randrange() (${start}, ${stop}, ${width})`);
    }
    let n: number;
    if (step > 0) n = Math.floor((width + step - 1) / step);
    else if (step < 0) n = Math.floor((width + step + 1) / step);
    else throw new ExprError('zero step for randrange()');
    if (n <= 0) throw new ExprError('empty range for randrange()');
    return start + step * this.randbelow(n);
  }

  /** `choice(seq)`. */
  choice<T>(seq: readonly T[]): T {
    if (seq.length === 0) throw new ExprError('Cannot choose from an empty sequence');
    return seq[this.randbelow(seq.length)] as T;
  }

  /** `shuffle(list)` in place. */
  shuffle<T>(x: T[]): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const t = x[i] as T;
      x[i] = x[j] as T;
      x[j] = t;
    }
  }
}

/** The 32-bit words CPython's `random_seed` feeds `init_by_array` for a seed value. */
function seedKey(seed: unknown): number[] {
  let n: bigint;
  if (typeof seed === 'string') {
    const bytes = Buffer.from(seed, 'utf8');
    const all = Buffer.concat([bytes, createHash('sha512').update(bytes).digest()]);
    n = all.length === 0 ? 0n : BigInt(`0x${all.toString('hex')}`);
  } else if (typeof seed === 'boolean') n = seed ? 1n : 0n;
  else if (typeof seed === 'number' && Number.isInteger(seed)) n = BigInt(seed);
  else if (typeof seed === 'number' || seed instanceof PyFloat) {
    // a float seeds with its hash
    const h = pyHashNumber(typeof seed === 'number' ? seed : seed.value);
    n = h >= 1n << 63n ? h - (1n << 64n) : h;
  } else throw new ExprError(`The only supported seed types are: None,\nint, float, str, bytes, and bytearray. (got ${typeName(seed)})`);
  if (n < 0n) n = -n;
  const words: number[] = [];
  while (n > 0n) {
    words.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  return words.length > 0 ? words : [0];
}

/** An unseeded draw below `n` (Python's SystemRandom): from the OS's randomness. */
export function systemRandbelow(n: number): number {
  return randomInt(n);
}
