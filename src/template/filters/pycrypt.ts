/**
 * `password_hash` as ansible-core computes it with passlib: SHA-512/SHA-256 crypt (`$6$`/`$5$`,
 * Drepper's algorithm, passlib's default rounds 656000/535000) and MD5 crypt (`$1$`). With the
 * same salt and rounds the hash is the one `crypt(3)` and passlib give.
 */
import { createHash, randomInt } from 'node:crypto';
import { ExprError } from '../values.js';

const B64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function b64from24(b2: number, b1: number, b0: number, n: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let out = '';
  for (let i = 0; i < n; i++) {
    out += B64[w & 0x3f];
    w >>= 6;
  }
  return out;
}

function repeatTo(src: Buffer, len: number): Buffer {
  const out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) out[i] = src[i % src.length] ?? 0;
  return out;
}

/** SHA-crypt (`$5$` with sha256, `$6$` with sha512). */
export function shaCrypt(password: string, saltIn: string, rounds: number | null, algo: 'sha256' | 'sha512'): string {
  const hashLen = algo === 'sha512' ? 64 : 32;
  const h = (...parts: Buffer[]): Buffer => {
    const x = createHash(algo);
    for (const p of parts) x.update(p);
    return x.digest();
  };
  const p = Buffer.from(password, 'utf8');
  const s = Buffer.from(saltIn.slice(0, 16), 'utf8');
  const r = rounds === null ? 5000 : Math.min(999_999_999, Math.max(1000, rounds));
  const b = h(p, s, p);
  const aParts: Buffer[] = [p, s, repeatTo(b, p.length)];
  for (let i = p.length; i > 0; i >>= 1) aParts.push(i & 1 ? b : p);
  let a = h(...aParts);
  const dp = repeatTo(h(...Array<Buffer>(p.length).fill(p)), p.length);
  const ds = repeatTo(h(...Array<Buffer>(16 + (a[0] ?? 0)).fill(s)), s.length);
  for (let i = 0; i < r; i++) {
    const x = createHash(algo);
    x.update(i & 1 ? dp : a);
    if (i % 3) x.update(ds);
    if (i % 7) x.update(dp);
    x.update(i & 1 ? a : dp);
    a = x.digest();
  }
  const c = a;
  let out = '';
  if (hashLen === 64) {
    const order = [
      [0, 21, 42], [22, 43, 1], [44, 2, 23], [3, 24, 45], [25, 46, 4], [47, 5, 26], [6, 27, 48], [28, 49, 7], [50, 8, 29], [9, 30, 51], [31, 52, 10],
      [53, 11, 32], [12, 33, 54], [34, 55, 13], [56, 14, 35], [15, 36, 57], [37, 58, 16], [59, 17, 38], [18, 39, 60], [40, 61, 19], [62, 20, 41],
    ];
    for (const [x, y, z] of order) out += b64from24(c[x ?? 0] ?? 0, c[y ?? 0] ?? 0, c[z ?? 0] ?? 0, 4);
    out += b64from24(0, 0, c[63] ?? 0, 2);
  } else {
    const order = [
      [0, 10, 20], [21, 1, 11], [12, 22, 2], [3, 13, 23], [24, 4, 14], [15, 25, 5], [6, 16, 26], [27, 7, 17], [18, 28, 8], [9, 19, 29],
    ];
    for (const [x, y, z] of order) out += b64from24(c[x ?? 0] ?? 0, c[y ?? 0] ?? 0, c[z ?? 0] ?? 0, 4);
    out += b64from24(0, c[31] ?? 0, c[30] ?? 0, 3);
  }
  const prefix = algo === 'sha512' ? '$6$' : '$5$';
  return `${prefix}${rounds === null ? '' : `rounds=${r}$`}${s.toString('utf8')}$${out}`;
}

/** MD5 crypt (`$1$`). */
export function md5Crypt(password: string, saltIn: string): string {
  const p = Buffer.from(password, 'utf8');
  const s = Buffer.from(saltIn.slice(0, 8), 'utf8');
  const md5 = (...parts: Buffer[]): Buffer => {
    const x = createHash('md5');
    for (const part of parts) x.update(part);
    return x.digest();
  };
  const b = md5(p, s, p);
  const parts: Buffer[] = [p, Buffer.from('$1$'), s, repeatTo(b, p.length)];
  for (let i = p.length; i > 0; i >>= 1) parts.push(i & 1 ? Buffer.from([0]) : p.subarray(0, 1));
  let a = md5(...parts);
  for (let i = 0; i < 1000; i++) {
    const x: Buffer[] = [];
    x.push(i & 1 ? p : a);
    if (i % 3) x.push(s);
    if (i % 7) x.push(p);
    x.push(i & 1 ? a : p);
    a = md5(...x);
  }
  const order = [
    [0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5],
  ];
  let out = '';
  for (const [x, y, z] of order) out += b64from24(a[x ?? 0] ?? 0, a[y ?? 0] ?? 0, a[z ?? 0] ?? 0, 4);
  out += b64from24(0, 0, a[11] ?? 0, 2);
  return `$1$${s.toString('utf8')}$${out}`;
}

function randomSalt(len: number): string {
  return Array.from({ length: len }, () => B64[randomInt(64)]).join('');
}

const ALIASES: Readonly<Record<string, string>> = { sha512: 'sha512_crypt', sha256: 'sha256_crypt', md5: 'md5_crypt', blowfish: 'bcrypt' };

/** ansible-core's `get_encrypted_password` with passlib: `sha512_crypt` (default), `sha256_crypt`, `md5_crypt`. */
export function passwordHash(password: string, hashtype: string, salt: string | null, saltSize: number | null, rounds: number | null): string {
  const scheme = ALIASES[hashtype] ?? hashtype;
  if (salt !== null && !/^[./0-9A-Za-z]*$/.test(salt)) throw new ExprError('invalid characters in sha512_crypt salt');
  if (scheme === 'sha512_crypt' || scheme === 'sha256_crypt') {
    const s = salt ?? randomSalt(saltSize ?? 16);
    const r = rounds ?? (scheme === 'sha512_crypt' ? 656000 : 535000);
    return shaCrypt(password, s, r, scheme === 'sha512_crypt' ? 'sha512' : 'sha256');
  }
  if (scheme === 'md5_crypt') return md5Crypt(password, salt ?? randomSalt(saltSize ?? 8));
  if (scheme === 'bcrypt') throw new ExprError('password_hash with blowfish/bcrypt is not supported by kplay', undefined, 'use sha512 (the default)');
  throw new ExprError(`${hashtype} is not in the list of supported passlib algorithms: md5, blowfish, sha256, sha512`);
}
