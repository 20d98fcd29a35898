/**
 * A local lock file, for inventory entries kplay cannot lock in a cluster: entries with no
 * kubeconfig or context (load-balancer-only inventories, where each entry is an HAProxy server
 * rather than a reachable cluster). It protects against two runs on this machine working on the
 * same entry at once; the file holds the holder (run id, user@host, playbook, pid) so a waiting
 * run can name it, and a file whose pid is gone is taken over at once.
 *
 * Files live in `$XDG_CACHE_HOME/kplay/locks` (default `~/.cache/kplay/locks`), one per entry.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { kplayCacheDir } from '../core/settings.js';
import { LockHeldError, processExists, type HolderInfo } from './lock.js';

/** Directory of the lock files. */
export function lockDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(kplayCacheDir(env), 'locks');
}

function readHolder(file: string): Partial<HolderInfo> | undefined {
  try {
    const v: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof v === 'object' && v !== null ? (v as Partial<HolderInfo>) : {};
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : {};
  }
}

const describe = (h: Partial<HolderInfo>): string => `run ${h.runId ?? '?'} (${h.user ?? '?'}@${h.host ?? '?'}, playbook ${h.playbook ?? '?'}, pid ${h.pid ?? '?'})`;

/** A held lock file; `release()` is idempotent. */
export class FileLock {
  private released = false;
  /** Never lost (nothing else can take a live holder's file); here for the same shape as ClusterLock. */
  readonly lost: string | undefined = undefined;

  private constructor(
    readonly file: string,
    private readonly holder: HolderInfo,
  ) {}

  /** Take the lock of entry `name`, waiting for another live holder up to `timeoutMs`. */
  static async acquire(name: string, opts: { holder: HolderInfo; timeoutMs?: number; signal?: AbortSignal; dir?: string; onWait?: (msg: string) => void; onTakeOver?: (msg: string) => void }): Promise<FileLock> {
    const dir = opts.dir ?? lockDir();
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.lock`);
    const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
    let waited = false;
    for (;;) {
      opts.signal?.throwIfAborted();
      try {
        writeFileSync(file, JSON.stringify(opts.holder), { flag: 'wx', mode: 0o644 });
        return new FileLock(file, opts.holder);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const held = readHolder(file);
      if (held === undefined) continue; // released in between
      const dead = typeof held.pid === 'number' && held.host === opts.holder.host && !processExists(held.pid);
      if (dead || held.runId === opts.holder.runId) {
        try {
          unlinkSync(file);
        } catch {
          // someone else removed it first
        }
        if (dead) opts.onTakeOver?.(`took over the local lock ${file} of ${describe(held)}: pid ${held.pid} on this host is gone`);
        continue;
      }
      if (Date.now() >= deadline) {
        throw new LockHeldError(`${name} is locked on this machine by ${describe(held)} (${file}); gave up after waiting ${Math.round((opts.timeoutMs ?? 60_000) / 1000)}s (--lock-timeout)`);
      }
      if (!waited) {
        waited = true;
        opts.onWait?.(`waiting for the local lock ${file} held by ${describe(held)}`);
      }
      await sleep(250, undefined, { signal: opts.signal });
    }
  }

  /** Remove the file if it is still ours. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const held = readHolder(this.file);
    if (held?.runId === this.holder.runId) {
      try {
        unlinkSync(this.file);
      } catch {
        // already gone
      }
    }
  }
}
