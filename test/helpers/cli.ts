// Spawn the BUILT kplay CLI (dist/src/cli/main.js) as a user would, and capture its output.
// `npm test` builds first; run `npx tsc -p .` before running a single test file by hand.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const kplayBin = path.join(repoRoot, 'dist/src/cli/main.js');

export interface KplayResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface KplayOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Kill with SIGKILL after this many ms (the test then sees signal SIGKILL). @default 120000 */
  timeoutMs?: number;
  /** Called once the child is running (e.g. to send SIGINT later). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Run `kplay ...args`; resolves when it exits. */
export function kplay(args: string[], opts: KplayOptions = {}): Promise<KplayResult> {
  if (!existsSync(kplayBin)) throw new Error(`${kplayBin} not built: run \`npm run build\` first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [kplayBin, ...args], {
      cwd: opts.cwd ?? repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    opts.onSpawn?.(child);
  });
}

/** Parse `--output json` stdout into events. */
export function jsonEvents(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** `list[i]`, failing the test (instead of reading undefined) when there is no such item. */
export function at<T>(list: readonly T[], i: number): T {
  const v = list[i];
  if (v === undefined) throw new Error(`expected an item at index ${i}, the list has ${list.length}`);
  return v;
}
