// `kplay run` in-process with the engine's runPlaybook replaced: the exit code of a crash (before
// and after tasks ran) and the forks default runManaged passes on.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { RunOptions } from '../../src/executor/state.js';
import type { RunSummary } from '../../src/executor/playbook-run.js';

const behaviour: { run: (opts: RunOptions) => Promise<RunSummary> } = { run: () => Promise.reject(new Error('not set')) };
vi.mock('../../src/executor/playbook-run.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../../src/executor/playbook-run.js')>();
  return { ...orig, runPlaybook: (opts: RunOptions) => behaviour.run(opts) };
});

const { runCommand } = await import('../../src/cli/run-command.js');
const { runManaged } = await import('../../src/run/managed-run.js');
const { DEFAULT_FORKS } = await import('../../src/core/settings-table.js');
const { EXIT } = await import('../../src/core/exit.js');

const dir = mkdtempSync(path.join(tmpdir(), 'kplay-cli-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pb = path.join(dir, 'site.yml');
writeFileSync(pb, '- hosts: localhost\n  tasks:\n    - debug: {msg: hi}\n');
const flags = { forks: '10', output: 'json', verbose: 0, recordDir: path.join(dir, 'runs'), color: false };

const summary = (): RunSummary => ({ exitCode: 0, stats: {}, interrupted: false, elapsedMs: 1, clusters: [] });

let stderr = '';
afterEach(() => vi.restoreAllMocks());
function captureStderr(): void {
  stderr = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    stderr += String(s);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
}

describe('kplay run: exit code of an unexpected error', () => {
  it('before any task ran: 1 (nothing was run)', async () => {
    captureStderr();
    behaviour.run = () => Promise.reject(new TypeError('boom before'));
    expect(await runCommand(pb, { ...flags })).toBe(1);
    expect(stderr).toContain('ERROR: boom before');
  });

  it('after a task ran: 6, saying clusters may have changed', async () => {
    captureStderr();
    behaviour.run = (opts) => {
      opts.emit({ type: 'task_result', task: 'apply', module: 'k8s_apply', cluster: 'localhost', status: 'changed', duration_ms: 1 });
      return Promise.reject(new TypeError('boom after'));
    };
    const code = await runCommand(pb, { ...flags });
    expect(code).toBe(EXIT.crashed);
    expect(code).toBe(6);
    expect(stderr).toContain('ERROR: the run stopped on an unexpected error after tasks had run, so clusters may have been changed: boom after');
  });

  it('in check mode nothing changed: 1', async () => {
    captureStderr();
    behaviour.run = (opts) => {
      opts.emit({ type: 'task_result', task: 'apply', module: 'k8s_apply', cluster: 'localhost', status: 'changed', duration_ms: 1 });
      return Promise.reject(new TypeError('boom in check'));
    };
    expect(await runCommand(pb, { ...flags, check: true })).toBe(1);
  });
});

describe('forks', () => {
  it('runManaged defaults to DEFAULT_FORKS (10), the CLI default', async () => {
    let seen: number | undefined;
    behaviour.run = (opts) => {
      seen = opts.forks;
      return Promise.resolve(summary());
    };
    const { loadAll } = await import('../../src/run/inputs.js');
    captureStderr();
    const loaded = await loadAll(pb, {}, true);
    await runManaged({ ...loaded, check: true, signal: new AbortController().signal, onEvent: () => undefined, inventory: loaded.inventory ?? (undefined as never) });
    expect(DEFAULT_FORKS).toBe(10);
    expect(seen).toBe(10);
  });
});
