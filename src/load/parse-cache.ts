/**
 * Parsed manifest files remembered across runs. Parsing YAML is most of what a no-op apply of a
 * large set costs kplay itself (~0.1 s for a 420 KB vendor set, the JIT still cold), and a rerun
 * parses the same text again. The cache maps a SHA-256 of the build and the text to the values the
 * parser gave, as JSON (~5 ms to read back). It is used only by a bundled build (`npm run build`
 * defines `KPLAY_BUILD_ID`, a new one per build, so a changed parser never reads an older one's
 * entries) and can be turned off with `KPLAY_PARSE_CACHE=0` (src/core/settings-table.ts).
 *
 * It lives in `$XDG_CACHE_HOME/kplay/manifests` (default `~/.cache/kplay/manifests`; directory
 * 0700, files 0600), holds at most {@link MAX_ENTRIES} entries (the least recently written go
 * first), and never holds what the caller says not to (`cacheable`: the manifests code keeps out
 * every file with a Secret). A cache that cannot be read or written is simply not used; an entry
 * that does not read back as what was written is ignored.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { kplayCacheDir, setting } from '../core/settings.js';

/** Set by the bundler (src/build/bundle.ts); absent when running from the TypeScript sources. */
declare const KPLAY_BUILD_ID: string | undefined;

/** Texts shorter than this are parsed every time (they parse in well under a millisecond per KB warm). */
export const MIN_CACHED_BYTES = 16 * 1024;

/** Entries kept; writing one more removes the least recently written. */
export const MAX_ENTRIES = 256;

/** Where entries go, and the build they belong to. */
export interface ParseCache {
  dir: string;
  build: string;
}

/** The cache of this process (see the header), or undefined when it is not used. */
export function parseCacheOf(env: NodeJS.ProcessEnv = process.env): ParseCache | undefined {
  const build = typeof KPLAY_BUILD_ID === 'string' ? KPLAY_BUILD_ID : undefined;
  if (!build || !setting('parseCache', env)) return undefined;
  return { dir: path.join(kplayCacheDir(env), 'manifests'), build };
}

/** Whether JSON gives `v` back as it is: plain maps and lists of strings, finite numbers (not -0), booleans and null. */
function jsonExact(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (Array.isArray(v)) return v.every(jsonExact);
  if (typeof v !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.values(v).every(jsonExact);
}

/**
 * `parse(text)`, from the cache when this build parsed the same text before. `valid` checks what
 * is read back (it is data from disk); `cacheable` says whether a result may be written.
 */
export function cachedParse<T>(cache: ParseCache | undefined, text: string, parse: (text: string) => T, valid: (v: unknown) => v is T, cacheable: (v: T) => boolean): T {
  if (!cache || text.length < MIN_CACHED_BYTES) return parse(text);
  const key = createHash('sha256').update(cache.build).update('\0').update(text).digest('hex');
  const file = path.join(cache.dir, `${key}.json`);
  try {
    const v: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (valid(v)) return v;
  } catch {
    // not cached (or unreadable): parse
  }
  const parsed = parse(text);
  if (cacheable(parsed)) write(cache.dir, file, parsed);
  return parsed;
}

function write(dir: string, file: string, v: unknown): void {
  if (!jsonExact(v)) return;
  try {
    const json = JSON.stringify(v);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, json, { mode: 0o600 });
    renameSync(tmp, file);
    evict(dir);
  } catch {
    // not cached; parsed again next time
  }
}

/** Remove the least recently written entries beyond {@link MAX_ENTRIES}. */
function evict(dir: string): void {
  const names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  if (names.length <= MAX_ENTRIES) return;
  const aged = names.flatMap((n) => {
    try {
      return [{ n, t: statSync(path.join(dir, n)).mtimeMs }];
    } catch {
      return [];
    }
  });
  aged.sort((a, b) => a.t - b.t);
  for (const { n } of aged.slice(0, aged.length - MAX_ENTRIES)) {
    try {
      unlinkSync(path.join(dir, n));
    } catch {
      // another run removed it
    }
  }
}
