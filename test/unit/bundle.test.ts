// The built CLI is a bundle (src/build/bundle.ts): it must load a handful of files, not the ~150
// of tsc's output, and a community module's `kplay/sdk` must be the same instance as the CLI's
// (an `UnreachableError` it throws is an unreachable cluster, not a module crash).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jsonEvents, kplay, kplayBin, repoRoot } from '../helpers/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-bundle-'));

/** Run the CLI with a resolve hook that writes every file URL it loads to a log; returns those URLs. */
async function loadedFiles(args: string[]): Promise<string[]> {
  const log = path.join(dir, `loaded-${Date.now()}.txt`);
  const hook = path.join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}`,
  );
  const register = path.join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hook).href)});\n`);
  writeFileSync(log, '');
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(register).href, kplayBin, ...args], { cwd: repoRoot, stdio: 'ignore' });
    child.on('exit', resolve);
  });
  expect(code).toBe(0);
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
}

describe('the bundled CLI', () => {
  it('loads the bundle and its chunks only for --help and validate (no tsc output, no dependency files)', async () => {
    for (const args of [['--help'], ['validate', 'playbooks/examples/hello.yml']]) {
      const files = (await loadedFiles(args)).map((u) => path.relative(repoRoot, new URL(u).pathname));
      const ours = files.filter((f) => !f.startsWith('node_modules'));
      expect(ours.filter((f) => !/^dist\/src\/(cli\/main|chunks\/chunk-[A-Z0-9]+)\.js$/.test(f) && !/^dist\/modules\/(_validators\/)?\w+\.js$/.test(f) && f !== 'dist/src/playbook/validators.gen.js'), args.join(' ')).toEqual([]);
      // ajv's standalone validators need a few runtime helpers from node_modules; nothing else does.
      expect(files.filter((f) => f.startsWith('node_modules') && !f.startsWith('node_modules/ajv/dist/runtime/')), args.join(' ')).toEqual([]);
    }
  });

  it('gives community modules the CLI own SDK instance', async () => {
    const mods = path.join(dir, 'modules');
    const pb = path.join(dir, 'play.yml');
    const inv = path.join(dir, 'inv.yml');
    mkdirSync(mods, { recursive: true });
    writeFileSync(
      path.join(mods, 'vpn_check.mjs'),
      `import { defineModule, Type, UnreachableError } from 'kplay/sdk';
export default defineModule({
  name: 'vpn_check',
  summary: 'Fail as unreachable',
  schema: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({}),
  checkMode: 'supported',
  diffMode: 'unsupported',
  examples: [],
  async run() { throw new UnreachableError('vpn to the cluster is down'); },
});
`,
    );
    writeFileSync(pb, '- hosts: all\n  tasks:\n    - name: reach\n      vpn_check: {}\n');
    writeFileSync(inv, 'all:\n  clusters:\n    prod-1: {}\n');
    const r = await kplay(['run', pb, '-i', inv, '-M', mods, '--no-lock', '-o', 'json']);
    const result = jsonEvents(r.stdout).find((e) => e.type === 'task_result');
    expect(result, r.stdout + r.stderr).toMatchObject({ status: 'unreachable', msg: 'vpn to the cluster is down' });
  });

  it('compiles no schema at run time for the playbook, the inventory and the built-in modules it uses', async () => {
    const stats = path.join(dir, 'stats.jsonl');
    const pb = path.join(dir, 'many.yml');
    const inv = path.join(dir, 'inv-many.yml');
    writeFileSync(inv, 'all:\n  vars: { team: ops }\n  clusters:\n    prod-1: { context: prod-1 }\n');
    writeFileSync(
      pb,
      `- hosts: all
  tasks:
    - set_fact: { replicas: "3" }
    - assert: { that: ["replicas | int == 3"] }
    - debug: { msg: "{{ team }} x {{ replicas }}" }
    - k8s_apply: { src: manifests/, namespace: web }
      when: false
    - helm_release: { name: web, chart: ./chart, namespace: web }
      when: false
    - wait_for: { kind: Deployment, name: web, namespace: web }
      when: false
`,
    );
    const compilations = (): unknown[] => readFileSync(stats, 'utf8').split('\n').filter((l) => l.includes('schemaCompilations')).map((l) => JSON.parse(l) as unknown);
    writeFileSync(stats, '');
    const v = await kplay(['validate', pb, '-i', inv], { env: { KPLAY_STATS_FILE: stats } });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const r = await kplay(['run', pb, '-i', inv, '--no-lock'], { env: { KPLAY_STATS_FILE: stats } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(compilations()).toEqual([]);
    // a community module has no generated validators: its schemas compile, and are counted
    writeFileSync(path.join(dir, 'community.yml'), '- hosts: all\n  tasks:\n    - vpn_check: {}\n');
    const c = await kplay(['validate', path.join(dir, 'community.yml'), '-M', path.join(dir, 'modules')], { env: { KPLAY_STATS_FILE: stats } });
    expect(c.code, c.stdout + c.stderr).toBe(0);
    const counted = compilations();
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ schemaCompilations: expect.any(Number) as number });
    expect((counted[0] as { schemaCompilations: number }).schemaCompilations).toBeGreaterThan(0);
  });
});
