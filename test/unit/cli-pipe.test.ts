// A reader that goes away (`kplay run … | head -1`) must not abort the run: kplay stops writing to
// the closed pipe, finishes the cluster work (here: the last task touches a file per cluster) and
// exits with its normal code, without an EPIPE stack trace. Read-only commands finish quietly.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kplayBin, repoRoot } from '../helpers/cli.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-pipe-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Run kplay, read the first chunk of stdout, then close our end of the pipe (as `head -1` does). */
function runAndCloseEarly(args: string[]): Promise<{ code: number | null; stderr: string; first: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [kplayBin, ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    let stderr = '';
    child.stdout.once('data', (d: Buffer) => {
      first = d.toString().split('\n')[0] ?? '';
      child.stdout.destroy();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, first }));
  });
}

describe('a closed stdout', () => {
  it('kplay run finishes its work and exits 0 when the reader goes away', async () => {
    const items = Array.from({ length: 3000 }, (_, i) => i).join(', ');
    const pb = path.join(tmp, 'many.yml');
    writeFileSync(pb, `- hosts: all\n  tasks:\n    - debug: { msg: "line {{ item }} ${'x'.repeat(100)}" }\n      loop: [${items}]\n    - command: { argv: [touch, "${tmp}/done-{{ cluster_name }}"] }\n`);
    const r = await runAndCloseEarly(['run', pb, '-i', path.join(repoRoot, 'playbooks/examples/inventories/demo.yml')]);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(r.code).toBe(0);
    for (const c of ['staging-eu-1', 'prod-eu-1', 'prod-eu-2', 'prod-us-1']) expect(existsSync(path.join(tmp, `done-${c}`)), c).toBe(true);
  });

  it('read-only commands exit quietly', async () => {
    const r = await runAndCloseEarly(['modules']);
    expect(r.first).toMatch(/^add_host\s/); // the first module, alphabetically
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
