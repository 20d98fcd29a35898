// CLI: two include_tasks of the same file, each with its own `vars:` (and a loop over it), run with the
// vars of the include that brought them in (a cache keyed by file alone gave every include the first one's).
// Spawns the built kplay on `hosts: localhost` (debug/set_fact only, no cluster contacted).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'kplay-include-vars-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const ENV = { HOME: path.join(root, 'home'), KUBECONFIG: path.join(root, 'no-kubeconfig'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined, KPLAY_RECORD_DIR: undefined, XDG_CACHE_HOME: path.join(root, 'cache') };

writeFileSync(path.join(root, 'step.yml'), '- name: say\n  debug: { msg: "{{ who }}-{{ version | default(0) }}" }\n');
writeFileSync(
  path.join(root, 'site.yml'),
  `- hosts: localhost
  gather_facts: false
  tasks:
    - include_tasks: step.yml
      loop: [a, b]
      loop_control: { loop_var: who }
    - include_tasks: { file: step.yml }
      vars: { who: c }
    - name: a third include of it
      include_tasks: step.yml
      vars: { who: d, version: 2 }
    - import_tasks: step.yml
      vars: { who: e }
`,
);

describe('include_tasks of one file from several tasks', () => {
  it('each include runs the file with its own vars', async () => {
    const r = await kplay(['run', path.join(root, 'site.yml'), '-o', 'json'], { cwd: root, env: ENV });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const said = jsonEvents(r.stdout).filter((e) => e.type === 'task_result' && e.task === 'say').map((e) => e.msg);
    expect(said).toEqual(['a-0', 'b-0', 'c-0', 'd-2', 'e-0']);
  });
});
