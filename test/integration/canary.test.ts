// Secret canaries against the sandbox: a secret given by name (`api_token`) and one marked
// `!secret` are used directly, through filters, in set_fact, in an object name, in Secret data, in
// helm values, in an http_check header, in a command's environment and in an API error. Every
// channel is searched afterwards — text, -v, -vv, --diff, --check, JSON events, drift, history,
// local run records and in-cluster run records — for the canaries and the forms derived from them.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';
import { helm, kubectl, sandboxEnv } from '../sandbox/env.js';

const CONTEXT = 'sandbox-2';
const suffix = Math.random().toString(16).slice(2, 8);
const ns = `canary-${suffix}`;
const TOKEN = `canarytok${suffix}x7f3a`; // lower-case: it is also used in an object name
const PASS = `Canary-Pass-${suffix}-91c2`;
const FORMS = [TOKEN, TOKEN.toUpperCase(), PASS, PASS.toLowerCase(), PASS.toUpperCase(), Buffer.from(TOKEN).toString('base64'), Buffer.from(PASS).toString('base64')];

let tmp: string;
let server: http.Server;
let inventory: string;
let playbook: string;
const channels: Record<string, string> = {};

beforeAll(async () => {
  const env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-canary-'));
  server = http.createServer((_req, res) => res.end('{"ok":true}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, [
    'all:',
    '  vars:',
    `    api_token: ${TOKEN}`,
    `    db_pass: !secret ${PASS}`,
    '  clusters:',
    `    ${CONTEXT}: { context: ${CONTEXT}, kubeconfig: ${env.kubeconfig} }`,
  ].join('\n'));
  playbook = path.join(tmp, 'canary.yml');
  writeFileSync(playbook, [
    '- hosts: all',
    '  tasks:',
    '    - name: namespace',
    `      k8s_apply: { definition: { apiVersion: v1, kind: Namespace, metadata: { name: ${ns} } } }`,
    '    - set_fact: { shout: "{{ db_pass | upcase }}", whisper: "{{ db_pass | downcase }}" }',
    '    - name: derived values',
    '      debug: { msg: "token {{ api_token | upcase }} pass {{ shout }} {{ whisper }}" }',
    '    - name: objects named after and holding secrets',
    '      vars: { kplay_allow_secret_in: [name] }', // deliberately: the canary checks such a name is masked everywhere
    '      k8s_apply:',
    `        namespace: ${ns}`,
    '        definition:',
    '          - { apiVersion: v1, kind: ConfigMap, metadata: { name: "cm-{{ api_token }}" }, data: { note: "plain" } }',
    '          - { apiVersion: v1, kind: Secret, metadata: { name: app-creds }, stringData: { password: "{{ db_pass }}", token: "{{ api_token }}" } }',
    '    - name: helm values',
    '      helm_release:',
    '        name: web',
    `        namespace: ${ns}`,
    `        chart: ${path.join(repoRoot, 'playbooks/charts/webapp-1.0.0')}`,
    '        values: { extraEnvs: [{ name: DB_PASS, value: "{{ db_pass }}" }], ui: { message: "{{ api_token }}" } }',
    '        wait: false',
    '    - name: header',
    `      http_check: { url: "http://127.0.0.1:${port}/", headers: { Authorization: "Bearer {{ api_token }}", X-Trace: "{{ db_pass | downcase }}" } }`,
    '    - name: command env',
    '      command: { argv: [sh, -c, "echo \\"$T $P\\""], env: { T: "{{ api_token }}", P: "{{ db_pass }}" } }',
    '      changed_when: false',
    '    - name: API error naming a secret-derived object',
    '      k8s_apply:',
    `        namespace: ${ns}`,
    '        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: "BAD-{{ db_pass | upcase }}" }, data: {} }',
    '      vars: { kplay_allow_secret_in: [name] } # a !secret-derived name is refused otherwise (test/integration/secret-sinks.test.ts); here the API error is the point',
    '      ignore_errors: true',
  ].join('\n'));
});

afterAll(async () => {
  server?.close();
  await helm(['uninstall', 'web', '-n', ns, '--ignore-not-found'], { context: CONTEXT, check: false });
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context: CONTEXT, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

describe('secret canaries: 0 hits in every channel', () => {
  it('runs with the secrets in every kind of use, in every output mode', async () => {
    const records = path.join(tmp, 'records');
    const env = { KPLAY_HELM: path.join(sandboxEnv().binDir, 'helm'), HELM_CACHE_HOME: path.join(tmp, 'h/c'), HELM_CONFIG_HOME: path.join(tmp, 'h/f'), HELM_DATA_HOME: path.join(tmp, 'h/d') };
    const run = (args: string[]) => kplay(['run', playbook, '-i', inventory, '--no-lock', '--record-dir', records, ...args], { env, timeoutMs: 200_000 });
    const check = await run(['--check', '--diff', '-vv']);
    channels['--check --diff -vv'] = check.stdout + check.stderr;
    const text = await run(['--diff', '-v']);
    channels['text --diff -v'] = text.stdout + text.stderr;
    expect(text.code, text.stdout.slice(-3000)).toBe(0);
    expect(text.stdout).toContain('token ******** pass ******** ********'); // the run really used them
    const json = await run(['-o', 'json', '-vv']);
    channels['json -vv'] = json.stdout + json.stderr;
    // drift after a hand edit of the secret, so drift has something (masked) to show
    await kubectl(['-n', ns, 'patch', 'secret', 'app-creds', '--type=merge', '-p', JSON.stringify({ stringData: { password: `${PASS}-edited` } })], { context: CONTEXT });
    const drift = await kplay(['drift', playbook, '-i', inventory, '-v'], { env, timeoutMs: 200_000 });
    channels.drift = drift.stdout + drift.stderr;
    expect(drift.code).toBe(3);
    const driftJson = await kplay(['drift', playbook, '-i', inventory, '-o', 'json', '--explain'], { env, timeoutMs: 200_000 });
    channels['drift json'] = driftJson.stdout + driftJson.stderr;
    const driftJunit = await kplay(['drift', playbook, '-i', inventory, '-o', 'junit'], { env, timeoutMs: 200_000 });
    channels['drift junit'] = driftJunit.stdout + driftJunit.stderr;
    const planFile = path.join(tmp, 'plan.json');
    const plan = await kplay(['plan', playbook, '-i', inventory, '-o', planFile], { env, timeoutMs: 200_000 });
    channels.plan = plan.stdout + plan.stderr;
    channels['plan file'] = readFileSync(planFile, 'utf8');
    expect(channels['plan file']).toContain('app-creds'); // the plan shows the drifted Secret (masked)
    const show = await kplay(['show', planFile, '-o', 'json'], { env });
    channels['show json'] = show.stdout + show.stderr;
    const history = await kplay(['history', '-i', inventory, '-o', 'json'], { env });
    channels.history = history.stdout + history.stderr;
    channels['local records'] = readdirSync(records).map((f) => readFileSync(path.join(records, f), 'utf8')).join('\n');
    channels['in-cluster records'] = (await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/run-id', '-o', 'yaml'], { context: CONTEXT, check: false })).stdout;
    expect(channels['local records'].length).toBeGreaterThan(100);
    expect(channels['in-cluster records']).toContain('kplay-run-'); // the in-cluster records exist and were searched
    expect(text.stdout).toMatch(/API error naming a secret-derived object[\s\S]*fatal:[\s\S]*\.\.\.ignoring/); // the API error happened (masked)
  });

  it('no channel shows a canary or a form derived from it', () => {
    const hits: string[] = [];
    for (const [name, out] of Object.entries(channels)) for (const form of FORMS) if (out.includes(form)) hits.push(`${name}: ${form}`);
    expect(hits).toEqual([]);
  });
});
