/**
 * Secret masking. Every sink (reporters, JSON events, run records, error messages, module logs)
 * passes text through one Masker per run. A registered secret is also masked in its base64 form,
 * so a Secret's `data` cannot leak either.
 */
import { SecretProvenance, type Origins } from './provenance.js';

export const MASK = '********';

/** Variable names whose values are treated as secrets automatically. */
export const SECRET_NAME = /(pass(word|wd)?|secret|token|api[_-]?key|private[_-]?key|credential|client[_-]?key)$/i;

export class Masker {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | undefined;
  /** Which of the masked values are declared secrets (see provenance.ts): kplay's own (`!secret`) are refused where they cannot be masked. */
  readonly provenance = new SecretProvenance();

  /** Register a value that must never be shown. Values shorter than 4 characters are ignored (too noisy). */
  add(value: unknown): void {
    if (typeof value !== 'string' && typeof value !== 'number') return;
    const s = String(value);
    if (s.length < 4) return;
    const before = this.secrets.size;
    this.secrets.add(s);
    this.secrets.add(Buffer.from(s, 'utf8').toString('base64'));
    if (s.includes('\n')) for (const line of s.split('\n')) if (line.trim().length >= 8) this.secrets.add(line);
    if (this.secrets.size !== before) this.pattern = undefined;
  }

  /**
   * Register a declared secret: masked like {@link add}, and known to be a secret by origin (a
   * `!secret` scalar, a Secret's data, a `password` lookup) rather than by the name it is stored under;
   * `own`: it derives from kplay's own secret (default: it is the text of a `!secret` scalar).
   */
  addDeclared(value: unknown, origins: Origins = [], own?: boolean): void {
    this.add(value);
    this.provenance.addValue(value, origins, own);
  }

  /** Register every string under `value` whose key looks secret (password, token, …). */
  addByName(value: unknown, depth = 0): void {
    if (depth > 32 || value === null || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (SECRET_NAME.test(k) && (typeof v === 'string' || typeof v === 'number')) this.add(v);
      else this.addByName(v, depth + 1);
    }
  }

  /** True when `value` (a string, or any string inside a list/map) is or contains a registered secret. */
  isSecret(value: unknown, depth = 0): boolean {
    if (this.secrets.size === 0 || depth > 32) return false;
    if (typeof value === 'string' || typeof value === 'number') {
      const s = String(value);
      return s.length >= 4 && this.mask(s) !== s;
    }
    if (Array.isArray(value)) return value.some((v) => this.isSecret(v, depth + 1));
    if (value !== null && typeof value === 'object') return Object.values(value as Record<string, unknown>).some((v) => this.isSecret(v, depth + 1));
    return false;
  }

  /** Number of registered secrets (for tests). */
  get size(): number {
    return this.secrets.size;
  }

  /** Replace every registered secret in `text` with `********`. */
  mask(text: string): string {
    if (this.secrets.size === 0 || !text) return text;
    if (!this.pattern) {
      const parts = [...this.secrets].sort((a, b) => b.length - a.length).map(escapeRegExp);
      this.pattern = new RegExp(parts.join('|'), 'g');
    }
    return text.replace(this.pattern, MASK);
  }

  /**
   * Mask every string inside a JSON-like value. Copy on write: a list or map with nothing to mask
   * is returned as it is (a run's events carry whole objects — large CRDs — and copying each of
   * them when no secret is in it cost milliseconds per task); one with something masked is a copy,
   * so `value` itself is never changed. Anything but plain data and arrays (an Error, a class) is
   * copied into a plain object of its own enumerable fields, masked.
   */
  maskValue<T>(value: T, depth = 0): T {
    if (typeof value === 'string') return this.mask(value) as T;
    if (depth > 64 || value === null || typeof value !== 'object') return value;
    const proto: unknown = Object.getPrototypeOf(value);
    if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
      // not plain data (an Error, a Map, a class): its own enumerable fields, masked, as a plain object
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = this.maskValue(v, depth + 1);
      return out as T;
    }
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      value.forEach((v: unknown, i) => {
        const m = this.maskValue(v, depth + 1);
        if (m !== v) (out ??= value.slice())[i] = m;
      });
      return (out ?? value) as T;
    }
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const m = this.maskValue(v, depth + 1);
      if (m !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = m;
    }
    return (out ?? value) as T;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
