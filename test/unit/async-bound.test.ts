// `async: N` bounds a task at N seconds: past it the task fails with Ansible's message and registers
// `async_result` (finished: false); a job started with `poll: 0` that nobody waits for is awaited
// before the run ends. Runs the built CLI on Ansible's implicit localhost (no cluster needed).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-async-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('async bound and background jobs', () => {
  it('fails a task past its bound, as Ansible words it, and awaits an unread background job before the run ends', async () => {
    const marker = path.join(dir, 'done');
    const file = path.join(dir, 'pb.yml');
    writeFileSync(
      file,
      `- hosts: localhost
  gather_facts: false
  tasks:
    - name: past its bound
      command: sleep 60
      async: 1
      poll: 1
      register: c
      ignore_errors: true
    - name: show
      debug: { msg: "failed={{ c.failed }} msg={{ c.msg }} finished={{ c.async_result.finished }} job={{ c.async_result.ansible_job_id is string }}" }
    - name: background, never read
      command: { argv: [sh, -c, "sleep 0.5; echo ok > ${marker}"] }
      async: 60
      poll: 0
`,
    );
    const r = await kplay(['run', file, '-o', 'json'], { cwd: dir });
    const shows = jsonEvents(r.stdout).filter((e) => e.type === 'task_result' && e.task === 'show');
    expect(shows.map((e) => e.msg)).toEqual(['failed=True msg=async task did not complete within the requested time - 1s finished=False job=True']);
    expect(r.code, r.stderr).toBe(0);
    // the run ended only after the background job had written its marker
    expect(readFileSync(marker, 'utf8')).toBe('ok\n');
  }, 120_000);
});
