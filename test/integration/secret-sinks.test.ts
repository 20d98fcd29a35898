// #32 item 8 against the sandbox: a value derived from a declared secret (`!secret`) used as an
// object name is refused — in a run, in --check and in a plan — before anything is written (the
// apiserver's audit log shows no write in the namespace), and no output channel nor run record
// shows the value. The harmless patterns still work: an Ingress's secretName from a `*_secret`
// variable (a secret-looking name, only masked), a Secret's stringData from a `!secret` value, and
// a password made under `no_log` passed to a Secret; opting in with `kplay_allow_secret_in` works.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';
import { auditSnapshot, kubectl, sandboxEnv, SANDBOX_ADMIN_USER } from '../sandbox/env.js';

const CONTEXT = 'sandbox-3';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `taint-${suffix}`;
const PW = `taintpw${suffix}q7z`; // lower-case: a valid object name, so only kplay can refuse it
const FORMS = [PW, PW.toUpperCase(), Buffer.from(PW).toString('base64')];

let tmp: string;
let inventory: string;
const records = (): string => path.join(tmp, 'records');

function allFiles(dir: string): string[] {
  let out: string[] = [];
  for (const f of readdirSync(dir)) {
    const p = path.join(dir, f);
    out = statSync(p).isDirectory() ? [...out, ...allFiles(p)] : [...out, p];
  }
  return out;
}

function playbook(name: string, tasks: string[]): string {
  const file = path.join(tmp, `${name}.yml`);
  writeFileSync(file, ['- hosts: all', '  gather_facts: false', '  tasks:', ...tasks].join('\n'));
  return file;
}

const run = (file: string, args: string[] = []) => kplay(['run', file, '-i', inventory, '--no-lock', '--record-dir', records(), ...args], { timeoutMs: 120_000 });

beforeAll(() => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-taint-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, [
    'all:',
    '  vars:',
    `    db_password: !secret ${PW}`,
    '    tls_secret: web-tls',
    '  clusters:',
    `    ${CONTEXT}: { context: ${CONTEXT}, kubeconfig: ${env.kubeconfig} }`,
  ].join('\n'));
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

describe('secret-derived values where they cannot be masked', () => {
  it('the harmless patterns work: secretName from a *_secret variable, Secret stringData from !secret and from a no_log password', async () => {
    const pb = playbook('good', [
      `    - k8s: { api_version: v1, kind: Namespace, name: ${ns} }`,
      '    - name: generate a password',
      '      set_fact: { app_pw: "{{ lookup(\'password\', \'/dev/null length=24 chars=ascii_letters\') }}" }',
      '      no_log: true',
      '    - name: secrets',
      '      k8s:',
      `        namespace: ${ns}`,
      '        definition:',
      '          - { apiVersion: v1, kind: Secret, metadata: { name: db }, stringData: { password: "{{ db_password }}" } }',
      '          - { apiVersion: v1, kind: Secret, metadata: { name: app }, stringData: { password: "{{ app_pw }}" } }',
      '    - name: ingress',
      '      k8s:',
      `        namespace: ${ns}`,
      '        definition: { apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: { name: web }, spec: { tls: [{ hosts: [web.example], secretName: "{{ tls_secret }}" }], rules: [{ host: web.example }] } }',
    ]);
    const r = await run(pb);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const got = (await kubectl(['-n', ns, 'get', 'secrets,ingresses', '-o', 'name'], { context: CONTEXT })).stdout;
    expect(got).toContain('secret/db');
    expect(got).toContain('secret/app');
    expect(got).toContain('ingress.networking.k8s.io/web');
    const stored = (await kubectl(['-n', ns, 'get', 'secret', 'db', '-o', 'jsonpath={.data.password}'], { context: CONTEXT })).stdout;
    expect(Buffer.from(stored, 'base64').toString()).toBe(PW);
  }, 150_000);

  it('a name derived from a !secret value is refused in a run, --check and a plan; nothing is written; no channel shows it', async () => {
    const pb = playbook('bad', [
      '    - name: config named after the password',
      `      k8s: { api_version: v1, kind: ConfigMap, name: "{{ db_password | lower }}", namespace: ${ns} }`,
    ]);
    const audit = auditSnapshot(sandboxEnv().cluster(CONTEXT).auditLog);
    const text = await run(pb, ['-v']);
    const check = await run(pb, ['--check', '--diff']);
    const json = await run(pb, ['-o', 'json']);
    const plan = await kplay(['plan', pb, '-i', inventory, '-o', path.join(tmp, 'plan.json')], { timeoutMs: 120_000 });
    for (const [what, r] of [['run', text], ['check', check], ['json', json], ['plan', plan]] as const) {
      expect(r.code, `${what}: ${r.stdout}${r.stderr}`).not.toBe(0);
      expect(r.stdout + r.stderr, what).toMatch(/refusing to write a value derived from a secret/);
    }
    expect(text.stdout).toContain(`task 'config named after the password' on cluster '${CONTEXT}'`);
    expect(text.stdout).toContain('name (name) from db_password');
    expect(text.stdout).toContain('kplay_allow_secret_in: [name]');
    await audit.settle();
    expect(audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns })).toEqual([]);
    const cms = (await kubectl(['-n', ns, 'get', 'configmaps', '-o', 'name'], { context: CONTEXT })).stdout;
    expect(cms).not.toContain(PW);
    const channels = [text.stdout, text.stderr, check.stdout, check.stderr, json.stdout, plan.stdout, plan.stderr, ...allFiles(tmp).filter((f) => !f.endsWith('.yml')).map((f) => readFileSync(f, 'utf8'))].join('\n');
    for (const form of FORMS) expect(channels.includes(form), form).toBe(false);
  }, 200_000);

  it('a manifest template file (k8s and k8s_apply `template:`) is checked as a definition: a label from the secret is refused, a Secret from it is not', async () => {
    writeFileSync(path.join(tmp, 'cm.yaml.j2'), [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: tpl-config',
      `  namespace: ${ns}`,
      '  labels:',
      '{% for k in ["a"] %}',
      '    {{ k }}: "{{ db_password | lower }}"',
      '{% endfor %}',
      'data: { note: plain }',
    ].join('\n'));
    writeFileSync(path.join(tmp, 'secret.yaml.j2'), `apiVersion: v1\nkind: Secret\nmetadata: { name: tpl-secret, namespace: ${ns} }\nstringData: { password: "{{ db_password }}" }\n`);
    const audit = auditSnapshot(sandboxEnv().cluster(CONTEXT).auditLog);
    const k8s = await run(playbook('tpl-k8s', ['    - name: from a template', '      kubernetes.core.k8s: { template: cm.yaml.j2 }']));
    const apply = await run(playbook('tpl-apply', ['    - name: from a template', `      k8s_apply: { template: cm.yaml.j2, namespace: ${ns} }`]));
    for (const r of [k8s, apply]) {
      expect(r.code, r.stdout + r.stderr).not.toBe(0);
      expect(r.stdout).toMatch(/refusing to write a value derived from a secret[^\n]*definition\[0\]\.metadata\.labels \(a value\) of a ConfigMap \(labels\) from db_password/);
      for (const form of FORMS) expect(r.stdout + r.stderr).not.toContain(form);
    }
    await audit.settle();
    expect(audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns }).filter((e) => e.resource === 'configmaps')).toEqual([]);
    const ok = await run(playbook('tpl-secret', ['    - kubernetes.core.k8s: { template: secret.yaml.j2 }']));
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  }, 150_000);

  it('the data of a Secret read with k8s_info is declared: written to a label as ansible-playbook writes it, masked and warned of; the Secret\'s name is not', async () => {
    const TOKEN = `readtok${suffix}k2`;
    await kubectl(['-n', ns, 'create', 'secret', 'generic', 'external', `--from-literal=token=${TOKEN}`], { context: CONTEXT });
    const pb = playbook('read', [
      `    - kubernetes.core.k8s_info: { kind: Secret, name: external, namespace: ${ns} }`,
      '      register: ext',
      '    - name: label with the secret\'s name',
      `      k8s: { kind: ConfigMap, name: uses-external, namespace: ${ns}, definition: { metadata: { labels: { from: "{{ ext.resources[0].metadata.name }}" } } } }`,
      '    - name: label with its token',
      `      k8s: { kind: ConfigMap, name: leaks-token, namespace: ${ns}, definition: { metadata: { labels: { t: "{{ ext.resources[0].data.token | b64decode }}" } } } }`,
    ]);
    const r = await run(pb);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/TASK \[label with the secret's name\] \*+\s+changed:/);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(/writes a value derived from a secret where it cannot be masked: [^\n]*from ext\.resources\[0\]\.data\.token \(from the data of Secret taint-\w+\/external\)/);
    expect(out).not.toMatch(/label with the secret's name[^\n]*writes a value derived/);
    expect(out).not.toContain(TOKEN);
    const cms = (await kubectl(['-n', ns, 'get', 'configmaps', '-o', 'name'], { context: CONTEXT })).stdout;
    expect(cms).toContain('configmap/uses-external');
    expect(cms).toContain('configmap/leaks-token');
  }, 150_000);

  it('with kplay_allow_secret_in: [name] the task opted in and the object is created', async () => {
    const pb = playbook('allowed', [
      '    - name: config named after the password, on purpose',
      `      k8s: { api_version: v1, kind: ConfigMap, name: "{{ db_password | lower }}", namespace: ${ns} }`,
      '      vars: { kplay_allow_secret_in: [name] }',
    ]);
    const r = await run(pb);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'configmaps', '-o', 'name'], { context: CONTEXT })).stdout).toContain(`configmap/${PW}`);
  }, 150_000);
});
