/**
 * The helm binary's version, remembered across runs: `helm version` costs a Go process start on
 * every run otherwise, although the binary rarely changes. The cache is keyed by the binary's
 * real path, size and modification time, so a replaced or upgraded helm is detected again. It
 * lives in `$XDG_CACHE_HOME/kplay` (default `~/.cache/kplay`); a cache that cannot be read or
 * written is simply not used.
 */
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { kplayCacheDir } from '../core/settings.js';
import type { HelmVersion } from './version.js';

/** Where the cache file is. */
export function versionCacheFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(kplayCacheDir(env), 'helm-versions.json');
}

/** The absolute path of `binary` (searched on PATH when it has no slash), or undefined. */
export function resolveBinary(binary: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = binary.includes('/') ? [binary] : (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((d) => path.join(d, binary));
  for (const c of candidates) {
    try {
      const st = statSync(c);
      if (st.isFile()) return realpathSync(c);
    } catch {
      // next candidate
    }
  }
  return undefined;
}

function keyOf(binary: string): string | undefined {
  const real = resolveBinary(binary);
  if (!real) return undefined;
  const st = statSync(real);
  return `${real}|${st.size}|${Math.trunc(st.mtimeMs)}`;
}

function readCache(file: string): Record<string, HelmVersion> {
  try {
    const v: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, HelmVersion>) : {};
  } catch {
    return {};
  }
}

/** Detections under way in this process, by binary: clusters worked on in parallel share one `helm version`. */
const detecting = new Map<string, Promise<HelmVersion>>();

/**
 * The version of `binary`: from the cache when the same file was seen before, else `detect()`
 * (then remembered) — once per process, however many clusters ask at the same time.
 */
export function cachedHelmVersion(binary: string, detect: () => Promise<HelmVersion>, file = versionCacheFile()): Promise<HelmVersion> {
  let key: string | undefined;
  try {
    key = keyOf(binary);
  } catch {
    key = undefined;
  }
  const id = `${file}|${key ?? binary}`;
  let p = detecting.get(id);
  if (!p) {
    p = lookUp(key, detect, file);
    detecting.set(id, p);
    // a failed detection is tried again by the next caller
    p.catch(() => detecting.delete(id));
  }
  return p;
}

async function lookUp(key: string | undefined, detect: () => Promise<HelmVersion>, file: string): Promise<HelmVersion> {
  const cache = key ? readCache(file) : {};
  const hit = key ? cache[key] : undefined;
  if (hit && typeof hit.major === 'number' && typeof hit.raw === 'string') return hit;
  const v = await detect();
  if (key) {
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ ...cache, [key]: v }));
    } catch {
      // not cached; detected again next time
    }
  }
  return v;
}
