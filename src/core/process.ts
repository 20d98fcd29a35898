/**
 * The one way kplay runs a child process (the `command` module, helm): tethered (it never outlives
 * kplay, see tether.ts), output captured up to a cap, stopped on the signal with SIGTERM and — if
 * it does not exit within a grace time — SIGKILL.
 */
import { spawn } from 'node:child_process';
import { spawnTethered } from './tether.js';

/** Options of {@link runProcess}. */
export interface ProcessOptions {
  /** Working directory. @default the current directory */
  cwd?: string;
  /** Environment. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Text written to standard input (stdin is closed after it). @default nothing (stdin ignored) */
  input?: string;
  /** Stops the process: SIGTERM, then SIGKILL after `termGraceMs`. */
  signal?: AbortSignal;
  /** Run in its own process group and signal the whole group (a shell and its pipeline). @default false */
  group?: boolean;
  /** Milliseconds between SIGTERM and SIGKILL once stopped. @default 5000 */
  termGraceMs?: number;
  /** Bytes of stdout and of stderr kept (each). @default 1 MiB */
  maxOutput?: number;
}

/** What a process did. */
export interface ProcessResult {
  stdout: string;
  stderr: string;
  /** Exit code; `null` when killed by a signal or when it could not start. */
  code: number | null;
  /** The signal that ended it, if any. */
  signal: NodeJS.Signals | null;
  /** Why it could not start (`ENOENT`: no such program, `EACCES`: not executable). */
  error?: NodeJS.ErrnoException;
}

/** Run `program args…` to completion (see the file header). Never rejects: a start failure is `error`. */
export function runProcess(program: string, args: string[], opts: ProcessOptions = {}): Promise<ProcessResult> {
  const max = opts.maxOutput ?? 1024 * 1024;
  return new Promise((resolve) => {
    const child = spawnTethered(
      () => spawn(program, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: opts.group === true }),
      { group: opts.group === true },
    );
    const kill = (sig: NodeJS.Signals): void => {
      try {
        if (opts.group && child.pid) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // already gone
      }
    };
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      if (stdout.length < max) stdout += d.toString('utf8');
    });
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < max) stderr += d.toString('utf8');
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input ?? '');
    }
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      kill('SIGTERM');
      killTimer = setTimeout(() => kill('SIGKILL'), opts.termGraceMs ?? 5000);
      killTimer.unref();
    };
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (r: ProcessResult): void => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      resolve(r);
    };
    child.on('error', (e: NodeJS.ErrnoException) => done({ stdout, stderr, code: null, signal: null, error: e }));
    child.on('close', (code, sig) => done({ stdout, stderr, code, signal: sig }));
  });
}
