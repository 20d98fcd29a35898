// Secret provenance (src/report/provenance.ts, src/executor/taint.ts) and the places a declared
// secret is refused (src/executor/sinks.ts), through in-process runs on Ansible's implicit
// localhost (commands run for real: `echo`): the refusal comes before the module runs, so no cluster is needed for it. Tasks that
// are not refused and need a cluster fail later, with another message; the test tells them apart.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAll } from '../../src/run/inputs.js';
import { secretSinks, sinksOf, allowedSinks } from '../../src/executor/sinks.js';
import { runManaged } from '../../src/run/managed-run.js';
import type { RunEvent } from '../../src/report/events.js';
import { SecretProvenance } from '../../src/core/provenance.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kplay-sinks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PW = 'Hunter2-Provenance-9x7';
const pw = PW.toLowerCase();
let n = 0;

/** Run `tasks` (YAML lines, indented 4) with `vars` (YAML lines, indented 4), without a lock; each task's result by name. */
async function run(vars: string[], tasks: string[]): Promise<{ results: Map<string, { status: string; msg: string }>; all: string }> {
  const file = path.join(dir, `pb-${n++}.yml`);
  writeFileSync(file, ['- hosts: localhost', '  gather_facts: false', '  vars:', ...vars, '  tasks:', ...tasks].join('\n'));
  const loaded = await loadAll(file, {}, true);
  const events: RunEvent[] = [];
  await runManaged({
    playbook: loaded.playbook,
    inventory: loaded.inventory as NonNullable<typeof loaded.inventory>,
    registry: loaded.registry,
    extraVars: loaded.extraVars,
    masker: loaded.masker,
    check: false,
    lock: false,
    recordDir: path.join(dir, 'records'),
    signal: new AbortController().signal,
    onEvent: (e) => events.push(e),
  });
  const results = new Map<string, { status: string; msg: string }>();
  for (const e of events) if (e.type === 'task_result') results.set(e.task, { status: e.status, msg: String(e.msg ?? '') });
  return { results, all: JSON.stringify(events) };
}

const REFUSED = /refusing to write a value derived from a secret/;

describe('sinks of module arguments', () => {
  it('finds names, labels, ConfigMap data, container commands and env values, hosts; not Secret data or valueFrom', () => {
    const sinks = sinksOf('k8s', {
      definition: [
        { kind: 'ConfigMap', metadata: { name: 'a', labels: { l: 'v' } }, data: { k: 'x' } },
        { kind: 'Secret', metadata: { name: 's' }, stringData: { password: 'p' }, data: { t: 'dA==' } },
        { kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { metadata: { annotations: { a: 'b' } }, spec: { containers: [{ command: ['run'], args: ['--x'], env: [{ name: 'E', value: 'v' }, { name: 'F', valueFrom: { secretKeyRef: { name: 's', key: 'password' } } }] }] } } } },
        { kind: 'Ingress', metadata: { name: 'i' }, spec: { rules: [{ host: 'h.example' }], tls: [{ hosts: ['h.example'], secretName: 'tls' }] } },
      ],
    });
    const fields = sinks.map((s) => `${s.kind} ${s.field}`);
    expect(fields).toEqual(expect.arrayContaining([
      'name definition[0].metadata.name',
      'labels definition[0].metadata.labels (a value)',
      'configmap definition[0].data (a value)',
      'name definition[1].metadata.name',
      'annotations definition[2].spec.template.metadata.annotations (a value)',
      'command definition[2].spec.template.spec.containers[0].command[0]',
      'command definition[2].spec.template.spec.containers[0].args[0]',
      'env definition[2].spec.template.spec.containers[0].env[0].value',
      'host definition[3].spec.rules[0].host',
      'host definition[3].spec.tls[0].hosts[0]',
    ]));
    expect(fields.some((f) => /stringData|\.data\.t|valueFrom|secretName/.test(f))).toBe(false);
  });

  it('parses a YAML text definition; a URL password is not a sink (it is sent as a header and masked)', () => {
    const sinks = sinksOf('k8s', { definition: 'kind: ConfigMap\nmetadata: {name: a}\n---\nkind: Secret\nmetadata: {name: b}\nstringData: {x: y}\n' });
    expect(sinks.map((s) => s.field)).toEqual(['definition[0].metadata.name', 'definition[1].metadata.name']);
    const hits = secretSinks('uri', { url: `https://u:${PW}@h.example/x` }, [{ path: ['url'], sources: ['pw'], parts: [PW] }]);
    expect(hits).toEqual([]);
    expect(secretSinks('uri', { url: `https://h.example/x?t=${PW}` }, [{ path: ['url'], sources: ['pw'], parts: [PW] }])).toHaveLength(1);
  });

  it('a tainted leaf hits only the sinks that hold what it rendered', () => {
    const args = { definition: { kind: 'Secret', metadata: { name: 'db' }, stringData: { pw: PW } } };
    expect(secretSinks('k8s', args, [{ path: ['definition', 'stringData', 'pw'], sources: ['pw'], parts: [PW] }])).toEqual([]);
    // a whole definition from one template: only the field holding the derived value
    const whole = { definition: { kind: 'ConfigMap', metadata: { name: `cm-${pw}`, namespace: 'web' }, data: {} } };
    const hits = secretSinks('k8s', whole, [{ path: ['definition'], sources: ['pw'], parts: [pw] }]);
    expect(hits.map((h) => h.sink.field)).toEqual(['definition.metadata.name']);
  });

  it('kplay_allow_secret_in takes a kind or a list of kinds; an unknown kind is an error naming the kinds', () => {
    expect([...(allowedSinks(['name', 'labels']) as Set<string>)]).toEqual(['name', 'labels']);
    expect([...(allowedSinks('command') as Set<string>)]).toEqual(['command']);
    expect(allowedSinks(['metadata.name'])).toMatch(/unknown kind "metadata.name"; give a list of: name, namespace, labels/);
  });
});

describe('provenance store', () => {
  it('matches declared values by equality, decodes Secret data, ignores trivial values', () => {
    const p = new SecretProvenance();
    p.addValue('admin-password-1', ['x']);
    p.addValue('true');
    p.addValue('42');
    expect(p.originsIn({ a: ['admin-password-1'] })).toEqual(['x']);
    expect(p.originsIn('admin-password-1-suffix')).toBeUndefined();
    expect(p.originsIn('true')).toBeUndefined();
    p.addSecretObjects({ resources: [{ kind: 'Secret', metadata: { name: 'db', namespace: 'web' }, data: { password: Buffer.from('s3cr3t-from-secret').toString('base64') } }] });
    expect(p.originsIn('s3cr3t-from-secret')).toEqual(['the data of Secret web/db']);
  });
});

describe('declared secrets are refused where they cannot be masked', () => {
  let r: Awaited<ReturnType<typeof run>>;
  /** Tasks that pass the check and then need a cluster (there is none: unreachable), one run each. */
  const reached = new Map<string, string>();
  beforeAll(async () => {
    const vars = [
        `    db_password: !secret ${PW}`,
        '    tls_secret: web-tls', // a secret-looking *name*: masked, never refused
        '    api_token: plain-token-by-name-1234',
        '    dsn: "postgres://app:{{ db_password }}@db:5432/app"',
        '    app_def: { kind: ConfigMap, metadata: { name: app-cfg, namespace: taint-unit }, data: { url: "{{ dsn }}" } }',
        '    secret_def: { kind: Secret, metadata: { name: app-creds, namespace: taint-unit }, stringData: { password: "{{ db_password }}" } }',
    ];
    for (const [name, task] of [
      ['secret definition variable', 'k8s: { definition: "{{ secret_def }}" }'],
      ['ingress secretName from a *_secret variable', 'k8s: { definition: { apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: { name: web, namespace: taint-unit }, spec: { tls: [{ hosts: [web.example], secretName: "{{ tls_secret }}" }] } } }'],
      ['secret stringData from a no_log fact', 'k8s: { definition: { kind: Secret, metadata: { name: app-creds, namespace: taint-unit }, stringData: { password: "{{ nolog_pw }}" } } }'],
      ['a Secret definition held by a fact', 'k8s: { definition: "{{ secret_fact }}" }'],
    ] as const) {
      const one = await run(vars, [
        '    - set_fact: { nolog_pw: "{{ db_password | lower }}" }',
        '      no_log: true',
        '    - set_fact: { secret_fact: { kind: Secret, metadata: { name: fact-creds, namespace: taint-unit }, stringData: { password: "pw-{{ db_password }}" } } }',
        `    - name: ${name}`,
        `      ${task}`,
      ]);
      reached.set(name, `${one.results.get(name)?.status ?? 'missing'}: ${one.results.get(name)?.msg ?? ''}`);
    }
    r = await run(
      vars,
      [
        '    - name: derived name',
        '      k8s: { kind: ConfigMap, name: "{{ db_password | lower }}", namespace: taint-unit }',
        '      ignore_errors: true',
        '    - name: label through a lazy variable',
        '      k8s: { definition: { kind: ConfigMap, metadata: { name: x, namespace: taint-unit, labels: { d: "{{ dsn | hash(\'sha1\') }}" } } } }',
        '      ignore_errors: true',
        '    - name: configmap data through a whole definition variable',
        '      k8s: { definition: "{{ app_def }}" }',
        '      ignore_errors: true',
        '    - name: fact derived',
        '      set_fact: { shout: "{{ db_password | upper }}", plain: "app" }',
        '    - name: name from the fact',
        '      k8s: { kind: ConfigMap, name: "cm-{{ shout | lower }}", namespace: taint-unit }',
        '      ignore_errors: true',
        '    - set_fact: { cm_fact: { kind: ConfigMap, metadata: { name: fact-cm, namespace: taint-unit }, data: { dsn: "pg://app:{{ db_password }}@db" } } }',
        '    - name: configmap held by a fact',
        '      k8s: { definition: "{{ cm_fact }}" }',
        '      ignore_errors: true',
        '    - name: name from the untainted fact',
        '      command: { argv: [echo, "{{ plain }}"] }',
        '    - name: no_log fact',
        '      set_fact: { token2: "{{ \'generated-\' ~ 99999 }}" }',
        '      no_log: true',
        '    - name: command line from the no_log fact',
        '      command: "echo {{ token2 }}"',
        '      ignore_errors: true',
        '    - name: loop over derived items',
        '      command: { argv: [echo, "{{ item }}"] }',
        '      loop: "{{ [db_password | upper, db_password | lower] }}"',
        '      ignore_errors: true',
        '    - name: env value',
        '      k8s: { definition: { kind: Pod, metadata: { name: p, namespace: taint-unit }, spec: { containers: [{ name: c, image: busybox, env: [{ name: P, value: "{{ db_password }}" }] }] } } }',
        '      ignore_errors: true',
        '    - name: opted in',
        '      command: { argv: [echo, "{{ db_password | length > 3 }}", "{{ db_password | b64encode }}"] }',
        '      vars: { kplay_allow_secret_in: [command] }',
        '      register: echoed',
        '    - name: registered output of an opted-in command',
        '      command: { argv: [echo, "{{ echoed.stdout }}"] }',
        '      ignore_errors: true',
        '    - name: a secret-looking name only',
        '      command: { argv: [echo, "{{ tls_secret }}", "{{ api_token | upper }}"] }',
        '    - name: password lookup as a name',
        '      k8s: { kind: ConfigMap, name: "{{ lookup(\'password\', \'/dev/null length=16 chars=ascii_lowercase\') }}", namespace: taint-unit }',
        '      ignore_errors: true',
        '    - name: url query',
        '      uri: { url: "http://127.0.0.1:9/x?key={{ db_password | urlencode }}" }',
        '      ignore_errors: true',
      ],
    );
  }, 60_000);

  const get = (name: string) => r.results.get(name) ?? { status: 'missing', msg: [...r.results].map(([k, v]) => `${k}: ${v.status} ${v.msg}`).join('\n') };

  it('refuses a derived value as an object name, naming the variable, field, task and cluster, and how to opt in', () => {
    const d = get('derived name');
    expect(d.status).toBe('failed');
    expect(d.msg).toMatch(REFUSED);
    expect(d.msg).toContain("task 'derived name' on cluster 'localhost'");
    expect(d.msg).toContain('name (name) from db_password');
    expect(d.msg).toContain('vars: { kplay_allow_secret_in: [name] }');
  });

  it('follows lazy variables, whole definitions, facts, no_log facts and loop items', () => {
    expect(get('label through a lazy variable').msg).toMatch(/labels \(a value\) of a ConfigMap \(labels\) from dsn \(from db_password\)/);
    expect(get('configmap data through a whole definition variable').msg).toMatch(/definition\.data \(a value\) of a ConfigMap \(configmap\) from dsn \(from db_password\)/);
    expect(get('name from the fact').msg).toMatch(/from shout \(from db_password\)/);
    expect(get('configmap held by a fact').msg).toMatch(/definition\.data \(a value\) of a ConfigMap \(configmap\) from cm_fact \(from db_password\)/);
    expect(get('configmap held by a fact').msg).not.toMatch(/metadata\.name/);
    expect(get('command line from the no_log fact').msg).toMatch(/_raw_params \(command\) from token2 \(from the no_log task 'no_log fact'\)/);
    expect(get('loop over derived items').status).toBe('failed');
    expect(get('env value').msg).toMatch(/env\[0\]\.value of a Pod \(env\) from db_password/);
    expect(get('url query').msg).toMatch(/url \(url\) from db_password/);
    expect(get('password lookup as a name').msg).toMatch(/name \(name\) from a lookup/);
  });

  it('lets through what is not derived from a declared secret, Secret data, and what the task opted in to', () => {
    for (const name of ['secret definition variable', 'ingress secretName from a *_secret variable', 'secret stringData from a no_log fact', 'a Secret definition held by a fact']) expect(reached.get(name)).toMatch(/^unreachable: .*kubeconfig/);
    expect(get('name from the untainted fact')).toMatchObject({ status: 'changed' });
    expect(get('a secret-looking name only').status).toBe('changed');
    expect(get('opted in').status).toBe('changed');
    // what an opted-in command printed derives from the secret: refused in the next task's command line
    expect(get('registered output of an opted-in command').msg).toMatch(/from echoed\.stdout \(from db_password\)/);
  });

  it('never shows the secret or a form of it', () => {
    for (const form of [PW, pw, PW.toUpperCase(), Buffer.from(PW).toString('base64')]) expect(r.all.includes(form), form).toBe(false);
  });
});

describe('variables only named like a password or token are refused in names, labels and annotations', () => {
  let r: Awaited<ReturnType<typeof run>>;
  const PLAIN = 'PlainByName-Pw-4411';
  beforeAll(async () => {
    r = await run(
      [`    db_password: ${PLAIN}`, '    tls_secret: web-tls', '    api_token: plain-token-by-name-5678', '    dsn: "pg://app:{{ db_password }}@db"'],
      [
        // first: a task needing the (absent) cluster makes it unreachable for the rest of the play
        '    - name: a command line with the password',
        '      command: { argv: [echo, "-p{{ db_password }}"] }',
        '    - name: name from db_password',
        '      k8s: { kind: ConfigMap, name: "{{ db_password | lower }}", namespace: taint-unit }',
        '      ignore_errors: true',
        '    - name: label through a lazy variable',
        '      k8s: { definition: { kind: ConfigMap, metadata: { name: cfg, namespace: taint-unit, labels: { dsn: "{{ dsn | hash(\'md5\') }}" } } } }',
        '      ignore_errors: true',
        '    - name: annotation from api_token',
        '      k8s: { definition: { kind: ConfigMap, metadata: { name: cfg, namespace: taint-unit, annotations: { t: "{{ api_token }}" } } } }',
        '      ignore_errors: true',
        '    - name: a Secret named by a *_secret variable',
        '      k8s: { definition: { kind: Secret, metadata: { name: "{{ tls_secret }}", namespace: taint-unit }, stringData: { password: "{{ db_password }}" } } }',
        '      ignore_errors: true',
      ],
    );
  }, 60_000);
  const get = (name: string) => r.results.get(name) ?? { status: 'missing', msg: '' };

  it('refuses them as an object name, a label and an annotation, naming the variable', () => {
    expect(get('name from db_password').msg).toMatch(REFUSED);
    expect(get('name from db_password').msg).toContain('from db_password');
    expect(get('label through a lazy variable').msg).toMatch(/labels \(a value\).*from dsn \(from db_password\)/);
    expect(get('annotation from api_token').msg).toMatch(/annotations.*from api_token/);
  });

  it('lets a Secret named by a *_secret variable, Secret data and command lines through (only masked)', () => {
    expect(get('a Secret named by a *_secret variable').msg).not.toMatch(REFUSED);
    expect(get('a command line with the password').status).toBe('changed');
    expect(r.all.includes(PLAIN)).toBe(false);
    expect(r.all.includes(PLAIN.toLowerCase())).toBe(false);
  });
});

describe('the structure of a no_log result is not secret, its values are', () => {
  it('prints the keys of a no_log fact (as Ansible does) and masks its values', async () => {
    const r = await run([], [
      '    - name: creds',
      '      set_fact: { creds: { username: "service-account-user", password: "Opaque-Value-77x" } }',
      '      no_log: true',
      '    - name: keys',
      '      debug: { msg: "keys={{ creds.keys() | sort }}" }',
      '    - name: value',
      '      debug: { msg: "pw={{ creds.password }} user={{ creds.username | upper }}" }',
    ]);
    expect(r.results.get('keys')?.msg).toBe("keys=['password', 'username']");
    expect(r.results.get('value')?.msg).toBe('pw=******** user=********');
    expect(r.all.includes('Opaque-Value-77x')).toBe(false);
    expect(r.all.includes('SERVICE-ACCOUNT-USER')).toBe(false);
  });
});
