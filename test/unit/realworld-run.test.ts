// Play behaviour the real-world corpus needs, checked with the built CLI on tasks that touch no
// cluster (debug, fail, command): force_handlers and group_names as ansible-playbook gives them
// (the same playbooks under ansible-playbook print the recap and messages asserted here).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-rw-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { KUBECONFIG: path.join(dir, 'no-kubeconfig'), KPLAY_RECORD_DIR: path.join(dir, 'runs'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined };

function file(name: string, text: string): string {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('force_handlers', () => {
  const playbook = (force: boolean): string =>
    file(
      `fh-${String(force)}.yml`,
      `- hosts: localhost
  gather_facts: false
  force_handlers: ${String(force)}
  handlers:
    - name: h
      debug: msg=handler-ran
  tasks:
    - command: echo x
      notify: h
    - fail: msg=boom
    - debug: msg=not-reached
- hosts: localhost
  gather_facts: false
  tasks:
    - debug: msg=second-play
`,
    );

  it('runs the handler notified before the failure, then the cluster leaves the run (ok=2 changed=1 failed=1)', async () => {
    const r = await kplay(['run', playbook(true)], { env });
    expect(r.stdout).toContain('RUNNING HANDLER [h]');
    expect(r.stdout).toContain('handler-ran');
    expect(r.stdout).not.toContain('not-reached');
    expect(r.stdout).not.toContain('second-play');
    expect(r.stdout).toMatch(/localhost\s+:\s+ok=2\s+changed=1\s+unreachable=0\s+failed=1/);
    expect(r.code).toBe(2);
  });

  it('without it the handler does not run (ok=1)', async () => {
    const r = await kplay(['run', playbook(false)], { env });
    expect(r.stdout).not.toContain('handler-ran');
    expect(r.stdout).toMatch(/localhost\s+:\s+ok=1\s+changed=1\s+unreachable=0\s+failed=1/);
  });
});

describe('group_names', () => {
  it("is ['ungrouped'] for an ungrouped host and the host's groups otherwise", async () => {
    const inv = file('inv.ini', 'h1\n[g]\nh2\n');
    const pb = file('gn.yml', `- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg="{{ inventory_hostname }} {{ group_names }}"\n`);
    const r = await kplay(['run', '-i', inv, pb], { env });
    expect(r.stdout).toContain("h1 ['ungrouped']");
    expect(r.stdout).toContain("h2 ['g']");
    expect(r.code).toBe(0);
  });
});
