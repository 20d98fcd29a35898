/**
 * Child processes that cannot outlive kplay. However kplay ends — Ctrl-C, an error, or `kill -9`,
 * where no handler runs — a helm or command child must not keep running (a `helm upgrade --wait`
 * left behind holds its release `pending-upgrade` until its own timeout).
 *
 * How: one small POSIX `sh` reaper per kplay process, started with the first tethered child. kplay
 * tells it, on a pipe, each child (or process group) that starts and ends. The kernel closes that
 * pipe when kplay exits in any way; the reaper then reads end-of-file and sends every child still
 * listed SIGTERM and, {@link TETHER_GRACE_S} seconds later, SIGKILL. The reaper ignores SIGINT,
 * SIGTERM and SIGHUP, so a Ctrl-C in the terminal (sent to the whole process group) or a closed
 * terminal does not take it down before it has done its job.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

/** Seconds between SIGTERM and SIGKILL when kplay has gone. */
export const TETHER_GRACE_S = 1.5;

const REAPER = [
  "trap '' INT TERM HUP",
  'pids=" "',
  'while read -r op id; do',
  '  case "$op" in',
  '    add) pids="$pids$id ";;',
  '    del) pids=$(printf "%s" "$pids" | sed "s/ $id / /");;',
  '  esac',
  'done',
  'case "$pids" in " ") exit 0;; esac',
  // dash's kill builtin cannot signal a process group (-PGID): use procps' kill for groups, else the leader
  'sig() { for p in $pids; do /bin/kill -s "$1" -- "$p" 2>/dev/null || kill -s "$1" "${p#-}" 2>/dev/null; done; }',
  'sig TERM',
  `sleep ${TETHER_GRACE_S}`,
  'sig KILL',
].join('\n');

let reaper: { proc: ChildProcess; input: Writable } | undefined;

function reaperInput(): Writable | undefined {
  if (!reaper) {
    try {
      const proc = spawn('/bin/sh', ['-c', REAPER], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
      proc.on('error', () => undefined);
      proc.unref();
      const input = proc.stdin as Writable & { _handle?: { unref?: () => void } };
      input.on('error', () => undefined);
      input._handle?.unref?.(); // the tether must not keep kplay's event loop alive
      reaper = { proc, input };
    } catch {
      return undefined;
    }
  }
  return reaper.input;
}

/**
 * Spawn a child tethered to this process: if kplay exits before the child does, the child (its
 * whole process group with `group`, for a child spawned `detached`) is stopped. The reaper is
 * started before `start` spawns the child, so a `kill -9` of kplay at any moment after the spawn
 * finds the child listed.
 * @example spawnTethered(() => spawn('helm', args, { stdio: ['ignore', 'pipe', 'pipe'] }))
 */
export function spawnTethered<T extends ChildProcess>(start: () => T, opts: { group?: boolean } = {}): T {
  reaperInput();
  const child = start();
  tether(child, opts);
  return child;
}

/**
 * Tether an already spawned child to this process (prefer {@link spawnTethered}, which also
 * starts the reaper first): if kplay exits before the child does, the child (its
 * whole process group when `group`, i.e. it was spawned `detached`) is stopped.
 */
export function tether(child: ChildProcess, opts: { group?: boolean } = {}): void {
  if (child.pid === undefined) return;
  const id = opts.group ? `-${child.pid}` : String(child.pid);
  const input = reaperInput();
  if (!input) return;
  input.write(`add ${id}\n`);
  child.once('exit', () => {
    if (!input.destroyed) input.write(`del ${id}\n`);
  });
}
