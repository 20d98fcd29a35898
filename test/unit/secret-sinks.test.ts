// Secret provenance (src/core/provenance.ts, src/executor/taint.ts) and the places kplay's own
// secret (`!secret`) is refused and any other secret warned of (src/executor/sinks.ts), through
// in-process runs on Ansible's implicit localhost (commands run for real: `echo`): the refusal comes
// before the module runs, so no cluster is needed for it. Tasks that are not refused and need a
// cluster fail later, with another message (unreachable); the test tells them apart.
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
// the tasks that pass the checks reach the connection step and stop there, on a kubeconfig that is
// not there: whatever ~/.kube/config or $KUBECONFIG the machine has is not read
const ambientKubeconfig = process.env.KUBECONFIG;
process.env.KUBECONFIG = path.join(dir, 'no-kubeconfig');
afterAll(() => {
  if (ambientKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = ambientKubeconfig;
  rmSync(dir, { recursive: true, force: true });
});

const PW = 'Hunter2-Provenance-9x7';
const pw = PW.toLowerCase();
let n = 0;

/** Run `tasks` (YAML lines, indented 4) with `vars` (YAML lines, indented 4), without a lock; each task's result by name. */
async function run(vars: string[], tasks: string[]): Promise<{ results: Map<string, { status: string; msg: string }>; warnings: Map<string, string>; all: string }> {
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
  const warnings = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'task_result') results.set(e.task, { status: e.status, msg: String(e.msg ?? '') });
    if (e.type === 'log' && e.level === 'warn') warnings.set(e.task, `${warnings.get(e.task) ?? ''}${e.msg}\n`);
  }
  return { results, warnings, all: JSON.stringify(events) };
}

const REFUSED = /refusing to write a value derived from a secret/;
const WARNED = /writes a value derived from a secret where it cannot be masked/;
const UNREACHABLE = /^unreachable: .*kubeconfig/;

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
  it('a service account token Secret\'s namespace and ca.crt are public: not declared', () => {
    const p = new SecretProvenance();
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    p.addSecretObjects({ kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'sa', namespace: 'team-ns' }, data: { namespace: b64('team-ns'), 'ca.crt': b64('-----BEGIN CERT-----'), token: b64('eyJhbGciOi-token') } });
    expect(p.originsIn('team-ns')).toBeUndefined();
    expect(p.originsIn('-----BEGIN CERT-----')).toBeUndefined();
    expect(p.originsIn('eyJhbGciOi-token')).toEqual(['the data of Secret team-ns/sa']);
    // an Opaque Secret's `namespace` key is data like any other
    p.addSecretObjects({ kind: 'Secret', type: 'Opaque', metadata: { name: 'o', namespace: 'x' }, data: { namespace: b64('other-ns') } });
    expect(p.originsIn('other-ns')).toEqual(['the data of Secret x/o']);
  });

  it('tells kplay\'s own secrets (and what derives from them) from the others', () => {
    const p = new SecretProvenance();
    p.addValue('vaulted-value-1', ['v']);
    p.addValue('own-value-1', ['o'], true);
    expect(p.ownIn('vaulted-value-1')).toBe(false);
    expect(p.ownIn({ a: ['own-value-1'] })).toBe(true);
    p.setVar('c', 'fact', ['o'], true);
    p.setVar('c', 'other', ['v']);
    expect([p.varOwn('c', 'fact'), p.varOwn('c', 'other'), p.varOwn('c', 'none')]).toEqual([true, false, false]);
  });

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

describe('kplay\'s own secrets (!secret) are refused where they cannot be masked, others warned of', () => {
  let r: Awaited<ReturnType<typeof run>>;
  /** Tasks that pass the check and then need a cluster (there is none: unreachable), one run each. */
  const reached = new Map<string, string>();
  const warned = new Map<string, string>();
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
      ['password lookup as a name', 'k8s: { kind: ConfigMap, name: "{{ lookup(\'password\', \'/dev/null length=16 chars=ascii_lowercase\') }}", namespace: taint-unit }'],
      ['name from the no_log fact', 'k8s: { kind: ConfigMap, name: "cm-{{ nolog_plain }}", namespace: taint-unit }'],
      ['name from a no_log fact derived from a !secret', 'k8s: { kind: ConfigMap, name: "cm-{{ nolog_pw }}", namespace: taint-unit }'],
      ['secret definition variable', 'k8s: { definition: "{{ secret_def }}" }'],
      ['ingress secretName from a *_secret variable', 'k8s: { definition: { apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: { name: web, namespace: taint-unit }, spec: { tls: [{ hosts: [web.example], secretName: "{{ tls_secret }}" }] } } }'],
      ['secret stringData from a no_log fact', 'k8s: { definition: { kind: Secret, metadata: { name: app-creds, namespace: taint-unit }, stringData: { password: "{{ nolog_pw }}" } } }'],
      ['a Secret definition held by a fact', 'k8s: { definition: "{{ secret_fact }}" }'],
    ] as const) {
      const one = await run(vars, [
        '    - set_fact: { nolog_pw: "{{ db_password | lower }}" }',
        '      no_log: true',
        '    - set_fact: { nolog_plain: "generated-{{ 12345 * 7 }}" }',
        '      no_log: true',
        '    - set_fact: { secret_fact: { kind: Secret, metadata: { name: fact-creds, namespace: taint-unit }, stringData: { password: "pw-{{ db_password }}" } } }',
        `    - name: ${name}`,
        `      ${task}`,
      ]);
      reached.set(name, `${one.results.get(name)?.status ?? 'missing'}: ${one.results.get(name)?.msg ?? ''}`);
      warned.set(name, one.warnings.get(name) ?? '');
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

  it('follows lazy variables, whole definitions, facts and loop items', () => {
    expect(get('label through a lazy variable').msg).toMatch(/labels \(a value\) of a ConfigMap \(labels\) from dsn \(from db_password\)/);
    expect(get('configmap data through a whole definition variable').msg).toMatch(/definition\.data \(a value\) of a ConfigMap \(configmap\) from dsn \(from db_password\)/);
    expect(get('name from the fact').msg).toMatch(/from shout \(from db_password\)/);
    expect(get('configmap held by a fact').msg).toMatch(/definition\.data \(a value\) of a ConfigMap \(configmap\) from cm_fact \(from db_password\)/);
    expect(get('configmap held by a fact').msg).not.toMatch(/metadata\.name/);
    expect(get('loop over derived items').status).toBe('failed');
    expect(get('env value').msg).toMatch(/env\[0\]\.value of a Pod \(env\) from db_password/);
    expect(get('url query').msg).toMatch(/url \(url\) from db_password/);
  });

  it('writes, as ansible-playbook does, what derives from a no_log result or a password lookup, and warns naming the field and variables', () => {
    expect(get('command line from the no_log fact').status).toBe('changed');
    expect(r.warnings.get('command line from the no_log fact')).toMatch(/_raw_params \(command\) from token2 \(from the no_log task 'no_log fact'\)/);
    expect(reached.get('password lookup as a name')).toMatch(UNREACHABLE);
    expect(warned.get('password lookup as a name')).toMatch(/name \(name\) from a lookup/);
    expect(reached.get('name from the no_log fact')).toMatch(UNREACHABLE);
    expect(warned.get('name from the no_log fact')).toMatch(WARNED);
    expect(r.warnings.get('derived name') ?? '').not.toMatch(WARNED); // refused, not warned of
    // no_log keeps a value derived from a !secret one of kplay's own
    expect(reached.get('name from a no_log fact derived from a !secret')).toMatch(/^failed: .*refusing to write .*from nolog_pw \(from the no_log task/);
  });

  it('lets through what is not derived from a declared secret, Secret data, and what the task opted in to', () => {
    for (const name of ['secret definition variable', 'ingress secretName from a *_secret variable', 'secret stringData from a no_log fact', 'a Secret definition held by a fact']) {
      expect(reached.get(name)).toMatch(UNREACHABLE);
      expect(warned.get(name)).toBe('');
    }
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

describe('variables only named like a password or token are warned of in names, labels and annotations, never refused', () => {
  const PLAIN = 'PlainByName-Pw-4411';
  const vars = [`    db_password: ${PLAIN}`, '    tls_secret: web-tls', '    api_token: plain-token-by-name-5678', '    dsn: "pg://app:{{ db_password }}@db"'];
  const results = new Map<string, string>();
  const warned = new Map<string, string>();
  let all = '';
  beforeAll(async () => {
    // each in a run of its own: a task needing the (absent) cluster makes it unreachable for the rest of the play
    for (const [name, task] of [
      ['a command line with the password', 'command: { argv: [echo, "-p{{ db_password }}"] }'],
      ['name from db_password', 'k8s: { kind: ConfigMap, name: "{{ db_password | lower }}", namespace: taint-unit }'],
      ['label through a lazy variable', 'k8s: { definition: { kind: ConfigMap, metadata: { name: cfg, namespace: taint-unit, labels: { dsn: "{{ dsn | hash(\'md5\') }}" } } } }'],
      ['annotation from api_token', 'k8s: { definition: { kind: ConfigMap, metadata: { name: cfg, namespace: taint-unit, annotations: { t: "{{ api_token }}" } } } }'],
      ['a Secret named by a *_secret variable', 'k8s: { definition: { kind: Secret, metadata: { name: "{{ tls_secret }}", namespace: taint-unit }, stringData: { password: "{{ db_password }}" } } }'],
    ] as const) {
      const one = await run(vars, [`    - name: ${name}`, `      ${task}`]);
      results.set(name, `${one.results.get(name)?.status ?? 'missing'}: ${one.results.get(name)?.msg ?? ''}`);
      warned.set(name, one.warnings.get(name) ?? '');
      all += one.all;
    }
  }, 60_000);

  it('writes them as an object name, a label and an annotation, warning naming the variable', () => {
    for (const name of ['name from db_password', 'label through a lazy variable', 'annotation from api_token']) expect(results.get(name)).toMatch(UNREACHABLE);
    expect(warned.get('name from db_password')).toContain('name (name) from db_password');
    expect(warned.get('label through a lazy variable')).toMatch(/labels \(a value\).*from dsn \(from db_password\)/);
    expect(warned.get('annotation from api_token')).toMatch(/annotations.*from api_token/);
  });

  it('lets a Secret named by a *_secret variable, Secret data and command lines through without a warning (only masked)', () => {
    expect(results.get('a Secret named by a *_secret variable')).toMatch(UNREACHABLE);
    expect(results.get('a command line with the password')).toMatch(/^changed/);
    expect(warned.get('a Secret named by a *_secret variable')).toBe('');
    expect(warned.get('a command line with the password')).toBe('');
    expect(all.includes(PLAIN)).toBe(false);
    expect(all.includes(PLAIN.toLowerCase())).toBe(false);
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
