// The benchmarks B1–B12. Each `run(env)` returns table rows:
//   {bench, kplay_ms, peer_ms, ratio, goal, met, kplay_requests, kplay_writes, peer_requests, peer_writes, notes, samples}
// Timings are medians of env.reps repetitions; kplay and the peer alternate, each on fresh namespaces.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { verbs } from './lib.mjs';
import { b14, b14Rows, B14_TITLE } from './b14-kcore-targets.mjs';
import { samples, SCRAPE_INTERVAL_S, startExporter, startPrometheus, waitForQuery } from '../helpers/prometheus.mjs';

const yamlDocs = (objs) => objs.map((o) => JSON.stringify(o)).join('\n---\n') + '\n';
const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ratioOf = (a, b) => (a === null || b === null || !b ? null : a / b);
const med = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/** Fail loudly with the tail of the output. */
function check(r, what) {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n${(r.stdout + '\n' + r.stderr).slice(-4000)}`);
  return r;
}

/** A kplay inventory: [{name, context, vars}] */
function inventory(env, hosts) {
  const lines = ['all:', '  clusters:'];
  for (const h of hosts) {
    lines.push(`    ${h.name}:`, `      context: ${h.context}`, `      kubeconfig: ${env.kubeconfig}`);
    if (h.vars && Object.keys(h.vars).length) {
      lines.push('      vars:');
      for (const [k, v] of Object.entries(h.vars)) lines.push(`        ${k}: ${JSON.stringify(v)}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** An Ansible YAML inventory (local connection, the venv's python). */
function ansibleInventory(env, hosts) {
  const lines = ['all:', '  vars:', '    ansible_connection: local', `    ansible_python_interpreter: ${env.venv}/bin/python`, '  hosts:'];
  for (const h of hosts) {
    lines.push(`    ${h.name}:`);
    for (const [k, v] of Object.entries(h.vars ?? {})) lines.push(`      ${k}: ${JSON.stringify(v)}`);
  }
  return lines.join('\n') + '\n';
}

function ansible(env, args, opts = {}) {
  return env.run(path.join(env.venv, 'bin', 'ansible-playbook'), args, {
    ...opts,
    env: { ANSIBLE_HOST_KEY_CHECKING: 'False', ANSIBLE_RETRY_FILES_ENABLED: 'False', ANSIBLE_PIPELINING: 'True', ANSIBLE_LOCALHOST_WARNING: 'False', ANSIBLE_INVENTORY_UNPARSED_WARNING: 'False', ANSIBLE_DEPRECATION_WARNINGS: 'False', ...opts.env },
  });
}

/** Wait (untimed) until namespaces are gone, so one run's deletion does not slow the next. */
async function waitGone(env, byContext, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (const [context, names] of byContext) {
    if (!names.length) continue;
    for (let i = 0; i < names.length; i += 50) await env.kubectl(['delete', 'ns', '--wait=false', '--ignore-not-found', ...names.slice(i, i + 50)], { context });
    for (;;) {
      const left = (await env.kubectl(['get', 'ns', '-o', 'name'], { context })).stdout.split('\n').filter((l) => names.includes(l.replace('namespace/', '').trim()));
      if (!left.length || Date.now() > deadline) break;
      await sleep(500);
    }
  }
}

/**
 * Wait (untimed) until every Deployment of `ns` is Available: the controllers have made and
 * started the pods of the run before. A no-op is measured from this settled state for both
 * tools, as ops run a second pass over a converged cluster; without it, the tool that finished
 * its cold run sooner met the controllers' peak of work on the same 2 cores.
 */
async function settle(env, context, ns) {
  check(await env.kubectl(['wait', '--for=condition=Available', '--timeout=180s', '-n', ns, 'deployment', '--all'], { context }), `deployments of ${ns} available`);
}

const byCtx = (pairs) => {
  const m = new Map();
  for (const [ctx, ns] of pairs) m.set(ctx, [...(m.get(ctx) ?? []), ns]);
  return m;
};

// ======================================================================= B1
function b1Objects(ns, group, n) {
  const out = { a: [], b: [] };
  out.a.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { bench: 'b1' } } });
  const kinds = [];
  for (let i = 0; i < n.crds; i++) {
    const kind = `Widget${i}`;
    const plural = `widget${i}s`;
    kinds.push(kind);
    out.a.push({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}`, labels: { bench: 'b1' } },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind, plural, singular: `widget${i}`, listKind: `${kind}List` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } } } } } }],
      },
    });
  }
  for (let i = 0; i < n.cms; i++) out.b.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns, labels: { app: `app-${i % 10}` } }, data: { 'app.properties': `key=${i}\nlevel=info\n`, index: String(i) } });
  for (let i = 0; i < n.svcs; i++) out.b.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: ns, labels: { app: `app-${i}` } }, spec: { selector: { app: `app-${i}` }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
  for (let i = 0; i < n.deps; i++) {
    out.b.push({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `app-${i}`, namespace: ns, labels: { app: `app-${i}` } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: `app-${i}` } },
        template: {
          metadata: { labels: { app: `app-${i}` } },
          spec: {
            containers: [
              {
                name: 'app',
                image: 'registry.k8s.io/pause:3.10',
                ports: [{ containerPort: 8080, name: 'http' }],
                env: [{ name: 'INDEX', value: String(i) }],
                resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
              },
            ],
          },
        },
      },
    });
  }
  for (let i = 0; i < n.crs; i++) out.b.push({ apiVersion: `${group}/v1`, kind: kinds[i % kinds.length], metadata: { name: `w-${i}`, namespace: ns }, spec: { size: i, color: 'blue' } });
  return out;
}

async function b1(env) {
  const n = env.quick ? { crds: 1, crs: 2, cms: 10, svcs: 8, deps: 8 } : { crds: 5, crs: 20, cms: 100, svcs: 80, deps: 94 };
  const total = 1 + n.crds + n.crs + n.cms + n.svcs + n.deps;
  const samples = { kCold: [], kNoop: [], pCold: [], pNoop: [], kColdReq: [], kNoopReq: [], kColdW: [], kNoopW: [], kNoopDry: [], pColdReq: [], pNoopReq: [], pColdW: [], pNoopW: [] };
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'kubectl']) {
      const ns = `${env.runId}-b1-${tool === 'kplay' ? 'kp' : 'kc'}${rep}`;
      const group = `${ns}.bench.kplay.dev`;
      const dir = path.join(env.work, 'b1', ns);
      const objs = b1Objects(ns, group, n);
      const mdir = path.join(dir, 'm');
      write(path.join(mdir, 'a', '00-namespace-crds.yaml'), yamlDocs(objs.a));
      write(path.join(mdir, 'b', '10-objects.yaml'), yamlDocs(objs.b));
      const belongs = (e) => {
        const r = e.objectRef ?? {};
        return r.namespace === ns || (r.resource === 'namespaces' && r.name === ns) || r.apiGroup === group || (r.resource === 'customresourcedefinitions' && String(r.name).endsWith(group));
      };
      if (tool === 'kplay') {
        const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  tasks:\n    - name: apply ${total} objects\n      k8s_apply:\n        src: "${mdir}/**/*.yaml"\n`);
        const inv = write(path.join(dir, 'inv.yml'), inventory(env, [{ name: 'sandbox-1', context: 'sandbox-1' }]));
        for (const phase of ['cold', 'noop']) {
          if (phase === 'noop') await settle(env, 'sandbox-1', ns);
          const mark = env.auditMark();
          const r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '-o', 'json']), `kplay B1 ${phase}`);
          const a = env.auditCount(mark, 'kplay', belongs);
          const key = phase === 'cold' ? 'kCold' : 'kNoop';
          samples[key].push(r.ms);
          samples[`${key}Req`].push(r.stats.requests);
          samples[`${key}W`].push(a.writes);
          samples[`${key}Verbs`] = verbs(r.stats);
          if (phase === 'noop') samples.kNoopDry.push(a.dryRuns);
        }
      } else {
        const k = (args) => env.kubectl(['-v=6', ...args]);
        // cold: what ops do with CRDs and their CRs in one set: CRDs first, wait Established, then the rest
        let mark = env.auditMark();
        const t0 = performance.now();
        const r1 = check(await k(['apply', '--server-side', '-f', path.join(mdir, 'a')]), 'kubectl apply CRDs');
        const r2 = check(await k(['wait', '--for=condition=Established', '--timeout=60s', ...objs.a.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `crd/${o.metadata.name}`)]), 'kubectl wait');
        const r3 = check(await k(['apply', '--server-side', '-f', path.join(mdir, 'b')]), 'kubectl apply');
        samples.pCold.push(performance.now() - t0);
        samples.pColdReq.push(sum([r1, r2, r3].map((r) => env.kubectlRequests(r.stderr))));
        samples.pColdW.push(env.auditCount(mark, 'kubectl', belongs).writes);
        await settle(env, 'sandbox-1', ns);
        mark = env.auditMark();
        const r4 = check(await k(['apply', '--server-side', '-R', '-f', mdir]), 'kubectl apply no-op');
        samples.pNoop.push(r4.ms);
        samples.pNoopReq.push(env.kubectlRequests(r4.stderr));
        samples.pNoopW.push(env.auditCount(mark, 'kubectl', belongs).writes);
      }
      await waitGone(env, byCtx([['sandbox-1', ns]]));
    }
  }
  const rows = [];
  const kc = med(samples.kCold);
  const pc = med(samples.pCold);
  rows.push({
    bench: `B1 apply ${total} objects, cold`,
    kplay_ms: kc,
    peer_ms: pc,
    ratio: ratioOf(kc, pc),
    goal: '<= 0.5x',
    met: ratioOf(kc, pc) !== null && ratioOf(kc, pc) <= 0.5,
    kplay_requests: med(samples.kColdReq),
    kplay_writes: med(samples.kColdW),
    peer_requests: med(samples.pColdReq),
    peer_writes: med(samples.pColdW),
    notes: `kplay requests: ${samples.kColdVerbs}; peer: kubectl apply --server-side (CRDs, wait Established, rest)`,
    samples,
  });
  const kn = med(samples.kNoop);
  const pn = med(samples.pNoop);
  const noopReq = med(samples.kNoopReq);
  const noopW = Math.max(...samples.kNoopW);
  rows.push({
    bench: `B1 apply ${total} objects, no-op`,
    kplay_ms: kn,
    peer_ms: pn,
    ratio: ratioOf(kn, pn),
    goal: '<= 0.5x, 0 writes, requests <= objects + discovery',
    met: ratioOf(kn, pn) !== null && ratioOf(kn, pn) <= 0.5 && noopW === 0 && noopReq <= total + 3,
    kplay_requests: noopReq,
    kplay_writes: noopW,
    peer_requests: med(samples.pNoopReq),
    peer_writes: med(samples.pNoopW),
    notes: `kplay requests: ${samples.kNoopVerbs}; audited dry-runs: ${Math.max(...samples.kNoopDry)}; peer: kubectl apply --server-side -R -f DIR`,
  });
  return rows;
}

// ======================================================================= B2
async function b2(env) {
  const nTasks = env.quick ? 5 : 50;
  const nClusters = env.quick ? 3 : 10;
  const samples = { k: [], p: [], kReq: [], kW: [], pW: [] };
  // One ansible-playbook run of the full size takes minutes on 2 cores (a Python process per task and
  // cluster); its single timing is far from the goal's boundary, so it runs once (kplay: env.reps).
  const repsPeer = Number(process.env.KPLAY_BENCH_B2_PEER_REPS ?? 1);
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'ansible']) {
      if (tool === 'ansible' && rep >= repsPeer) continue;
      const prefix = `${env.runId}-b2-${tool[0]}${rep}`;
      const hosts = Array.from({ length: nClusters }, (_, i) => ({ name: `c${String(i + 1).padStart(2, '0')}`, context: env.clusters[i % env.clusters.length].context, ns: `${prefix}-c${i + 1}` }));
      const dir = path.join(env.work, 'b2', prefix);
      const belongs = (e) => String(e.objectRef?.namespace ?? '').startsWith(prefix) || (e.objectRef?.resource === 'namespaces' && String(e.objectRef?.name).startsWith(prefix));
      const mark = env.auditMark();
      if (tool === 'kplay') {
        const tasks = [`    - name: namespace\n      k8s_apply:\n        definition: { apiVersion: v1, kind: Namespace, metadata: { name: "{{ ns }}" } }`];
        for (let t = 1; t < nTasks; t++) tasks.push(`    - name: configmap ${t}\n      k8s_apply:\n        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: cm-${t}, namespace: "{{ ns }}" }, data: { index: "${t}" } }`);
        const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  tasks:\n${tasks.join('\n')}\n`);
        const inv = write(path.join(dir, 'inv.yml'), inventory(env, hosts.map((h) => ({ name: h.name, context: h.context, vars: { ns: h.ns } }))));
        const r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '--forks', '10', '-o', 'json']), 'kplay B2');
        samples.k.push(r.ms);
        samples.kReq.push(r.stats.requests);
        samples.kW.push(env.auditCount(mark, 'kplay', belongs).writes);
      } else {
        const tasks = [`    - name: namespace\n      kubernetes.core.k8s:\n        kubeconfig: "{{ kc }}"\n        context: "{{ ctx }}"\n        definition: { apiVersion: v1, kind: Namespace, metadata: { name: "{{ ns }}" } }`];
        for (let t = 1; t < nTasks; t++) tasks.push(`    - name: configmap ${t}\n      kubernetes.core.k8s:\n        kubeconfig: "{{ kc }}"\n        context: "{{ ctx }}"\n        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: cm-${t}, namespace: "{{ ns }}" }, data: { index: "${t}" } }`);
        const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  gather_facts: false\n  tasks:\n${tasks.join('\n')}\n`);
        const inv = write(path.join(dir, 'inv.yml'), ansibleInventory(env, hosts.map((h) => ({ name: h.name, vars: { ns: h.ns, ctx: h.context, kc: env.kubeconfig } }))));
        const r = check(await ansible(env, [pb, '-i', inv, '--forks', '10']), 'ansible-playbook B2');
        samples.p.push(r.ms);
        samples.pW.push(env.auditCount(mark, 'OpenAPI-Generator', belongs).writes);
      }
      await waitGone(env, byCtx(hosts.map((h) => [h.context, h.ns])));
    }
  }
  const k = med(samples.k);
  const p = med(samples.p);
  return [
    {
      bench: `B2 ${nTasks} tasks x ${nClusters} clusters`,
      kplay_ms: k,
      peer_ms: p,
      ratio: ratioOf(k, p),
      goal: '<= 0.05x',
      met: ratioOf(k, p) !== null && ratioOf(k, p) <= 0.05,
      kplay_requests: med(samples.kReq),
      kplay_writes: med(samples.kW),
      peer_requests: null,
      peer_writes: med(samples.pW),
      notes: `peer: ansible-playbook + kubernetes.core.k8s, forks 10 (${samples.p.length} run(s))`,
      samples,
    },
  ];
}

// ======================================================================= B3
async function b3(env) {
  const nClusters = env.quick ? 10 : 100;
  const nObjects = env.quick ? 10 : 100;
  const forksList = [10, 25, 50];
  const rows = [];
  for (const forks of forksList) {
    const samples = { k: [], p: [], kReq: [], kW: [], kRss: [], kRetries: [], k429: [], pW: [], p429: [], pReq: [] };
    for (let rep = 0; rep < env.reps; rep++) {
      for (const tool of ['kplay', 'kubectl']) {
        const prefix = `${env.runId}-b3-${tool === 'kplay' ? 'kp' : 'kc'}${forks}-${rep}`;
        const dir = path.join(env.work, 'b3', prefix);
        const hosts = Array.from({ length: nClusters }, (_, i) => ({ name: `c${String(i + 1).padStart(3, '0')}`, context: env.clusters[i % env.clusters.length].context, ns: `${prefix}-c${i + 1}` }));
        const objsFor = (ns) => [
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
          ...Array.from({ length: nObjects - 1 }, (_, j) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${j}`, namespace: ns, labels: { app: 'b3' } }, data: { index: String(j), 'config.yaml': `replicas: ${j}\nlevel: info\n` } })),
        ];
        const belongs = (e) => String(e.objectRef?.namespace ?? '').startsWith(prefix) || (e.objectRef?.resource === 'namespaces' && String(e.objectRef?.name).startsWith(prefix));
        const mark = env.auditMark();
        if (tool === 'kplay') {
          const tpl = write(path.join(dir, 'objects.yaml'), yamlDocs(objsFor('NSPLACEHOLDER')).replaceAll('NSPLACEHOLDER', '{{ ns }}'));
          const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  tasks:\n    - name: apply ${nObjects} objects\n      k8s_apply:\n        template: ${tpl}\n`);
          const inv = write(path.join(dir, 'inv.yml'), inventory(env, hosts.map((h) => ({ name: h.name, context: h.context, vars: { ns: h.ns } }))));
          const r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '--forks', String(forks), '-o', 'json'], { timeRss: true, tmpDir: dir }), `kplay B3 forks ${forks}`);
          const a = env.auditCount(mark, 'kplay', belongs);
          samples.k.push(r.ms);
          samples.kReq.push(r.stats.requests);
          samples.kRetries.push(r.stats.retries);
          samples.kW.push(a.writes);
          samples.k429.push(a.status429);
          samples.kRss.push(r.rssKiB);
        } else {
          const lines = [];
          for (const h of hosts) {
            const f = write(path.join(dir, `${h.name}.yaml`), yamlDocs(objsFor(h.ns)));
            lines.push(`${h.context} ${f} ${path.join(dir, `${h.name}.log`)}`);
          }
          const script = write(path.join(dir, 'apply.sh'), `#!/bin/sh\nexec "${env.kubectlBin}" --kubeconfig "${env.kubeconfig}" --cache-dir "${path.join(env.work, 'kube-cache')}" --context "$1" -v=6 apply --server-side -f "$2" >/dev/null 2>"$3"\n`);
          fs.chmodSync(script, 0o755);
          const r = check(await env.run('xargs', ['-P', String(forks), '-L', '1', script], { input: lines.join('\n') + '\n' }), `xargs kubectl B3 forks ${forks}`);
          const a = env.auditCount(mark, 'kubectl', belongs);
          samples.p.push(r.ms);
          samples.pW.push(a.writes);
          samples.p429.push(a.status429);
          samples.pReq.push(sum(hosts.map((h) => env.kubectlRequests(fs.readFileSync(path.join(dir, `${h.name}.log`), 'utf8')))));
        }
        await waitGone(env, byCtx(hosts.map((h) => [h.context, h.ns])), 300_000);
      }
    }
    const k = med(samples.k);
    const p = med(samples.p);
    const rssMiB = Math.max(...samples.kRss.filter((x) => x)) / 1024;
    rows.push({
      bench: `B3 ${nClusters} clusters x ${nObjects} objects, forks ${forks}`,
      kplay_ms: k,
      peer_ms: p,
      ratio: ratioOf(k, p),
      goal: '<= 0.5x, RSS < 512 MB, no failed 429',
      met: ratioOf(k, p) !== null && ratioOf(k, p) <= 0.5 && rssMiB < 512,
      kplay_requests: med(samples.kReq),
      kplay_writes: med(samples.kW),
      peer_requests: med(samples.pReq),
      peer_writes: med(samples.pW),
      notes: `kplay peak RSS ${rssMiB.toFixed(0)} MiB, 429s kplay ${Math.max(...samples.k429)} (retried ${Math.max(...samples.kRetries)}) / peer ${Math.max(...samples.p429)}; peer: xargs -P ${forks} kubectl apply --server-side`,
      samples,
    });
  }
  return rows;
}

// ======================================================================= B4
async function b4(env) {
  const nRel = env.quick ? 2 : 10;
  return helmBench(env, { id: 'b4', nRel, chart: path.resolve(env.repoRoot, 'playbooks/charts/webapp-1.0.0'), release: 'webapp', label: `B4 helm_release ${nRel} releases` });
}

/**
 * B4b: one release of an ingress controller chart shaped after ingress-nginx
 * (test/fixtures/corpus/charts/ingress-controller: controller, RBAC, IngressClass, admission
 * webhook whose certificate hook Jobs run before and after the install), install then no-op,
 * against `helm upgrade --install --wait`. Goal (issue 31): install <= 1.1x.
 */
async function b4b(env) {
  const chart = path.resolve(env.repoRoot, 'test/fixtures/corpus/charts/ingress-controller');
  // cluster-scoped objects of a release in namespace ns (see the chart's templates)
  const clusterScoped = (ns) => [`ingressclass/nginx-${ns}`, `validatingwebhookconfiguration/ingress-ingress-controller-${ns}-admission`, `clusterrole/ingress-ingress-controller-${ns}`, `clusterrolebinding/ingress-ingress-controller-${ns}`, `clusterrole/ingress-ingress-controller-${ns}-admission`, `clusterrolebinding/ingress-ingress-controller-${ns}-admission`];
  return helmBench(env, { id: 'b4b', nRel: 1, chart, release: 'ingress', label: 'B4b helm_release ingress controller chart (hooks, webhook)', clusterScoped });
}

/**
 * `helm_release` of a local chart in `nRel` namespaces (one inventory entry each, forks nRel),
 * install then no-op, against `helm upgrade --install --wait`, nRel in parallel (B4, B4b).
 */
async function helmBench(env, spec) {
  const { nRel, chart } = spec;
  if (!fs.existsSync(chart)) throw new Error(`chart ${chart} missing`);
  const helmHome = path.join(env.work, 'helm-home');
  const helmEnv = { HELM_CACHE_HOME: path.join(helmHome, 'cache'), HELM_CONFIG_HOME: path.join(helmHome, 'config'), HELM_DATA_HOME: path.join(helmHome, 'data') };
  const samples = { kIns: [], kNoop: [], pIns: [], pNoop: [], kInsW: [], kNoopW: [], pInsW: [], pNoopW: [], kInsReq: [], kNoopReq: [], kNewRev: [], pNewRev: [], kInsHelm: [], kNoopHelm: [] };
  // kplay's helm behind a wrapper that counts processes: a no-op must run none, a change one per release.
  const helmCalls = path.join(env.work, 'b4-helm-calls.log');
  // The wrapper is the same file from run to run (rewritten only when its text changes), as a
  // user's helm is: kplay remembers a binary's version, so `helm version` runs the first time only.
  const wrapperText = `#!/bin/sh\necho "$1" >> "$KPLAY_BENCH_HELM_LOG"\nexec "${env.helmBin}" "$@"\n`;
  const helmWrapper = path.join(env.store, 'b4-helm-counting.sh');
  if (!fs.existsSync(helmWrapper) || fs.readFileSync(helmWrapper, 'utf8') !== wrapperText) write(helmWrapper, wrapperText);
  fs.chmodSync(helmWrapper, 0o755);
  const helmLines = () => (fs.existsSync(helmCalls) ? fs.readFileSync(helmCalls, 'utf8').split('\n').filter(Boolean) : []);
  const helmCount = () => helmLines().length;
  let installCalls = [];
  const revisions = async (hosts) => {
    let total = 0;
    for (const h of hosts) {
      const r = await env.run(env.helmBin, ['--kubeconfig', env.kubeconfig, '--kube-context', h.context, 'list', '-n', h.ns, '-o', 'json'], { env: helmEnv });
      for (const rel of JSON.parse(r.stdout || '[]')) total += Number(rel.revision);
    }
    return total;
  };
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'helm']) {
      const prefix = `${env.runId}-${spec.id}-${tool[0]}${rep}`;
      const dir = path.join(env.work, spec.id, prefix);
      const hosts = Array.from({ length: nRel }, (_, i) => ({ name: `r${String(i + 1).padStart(2, '0')}`, context: env.clusters[i % env.clusters.length].context, ns: `${prefix}-r${i + 1}` }));
      const belongs = (e) => String(e.objectRef?.namespace ?? '').startsWith(prefix) || String(e.objectRef?.name ?? '').includes(prefix);
      if (tool === 'kplay') {
        const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  tasks:\n    - name: ${spec.release}\n      helm_release:\n        name: ${spec.release}\n        namespace: "{{ ns }}"\n        create_namespace: true\n        chart: ${chart}\n        wait: true\n        timeout: 120\n`);
        const inv = write(path.join(dir, 'inv.yml'), inventory(env, hosts.map((h) => ({ name: h.name, context: h.context, vars: { ns: h.ns } }))));
        for (const phase of ['install', 'noop']) {
          const mark = env.auditMark();
          const calls = helmCount();
          const r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '--forks', String(nRel), '-o', 'json'], { env: { ...helmEnv, KPLAY_HELM: helmWrapper, KPLAY_BENCH_HELM_LOG: helmCalls } }), `kplay ${spec.id} ${phase}`);
          const w = env.auditCount(mark, 'kplay', belongs).writes + env.auditCount(mark, 'helm', belongs).writes;
          if (phase === 'install') {
            samples.kIns.push(r.ms);
            samples.kInsW.push(w);
            samples.kInsHelm.push(helmCount() - calls);
            samples.kInsReq.push(r.stats.requests);
            samples.kInsVerbs = verbs(r.stats);
            installCalls = helmLines().slice(calls);
          } else {
            samples.kNoop.push(r.ms);
            samples.kNoopW.push(w);
            samples.kNoopHelm.push(helmCount() - calls);
            samples.kNoopReq.push(r.stats.requests);
            samples.kNoopVerbs = verbs(r.stats);
            samples.kNewRev.push((await revisions(hosts)) - nRel);
          }
        }
      } else {
        const script = write(path.join(dir, 'helm.sh'), `#!/bin/sh\nexec "${env.helmBin}" --kubeconfig "${env.kubeconfig}" --kube-context "$1" upgrade --install ${spec.release} "${chart}" -n "$2" --create-namespace --wait --timeout 120s >/dev/null\n`);
        fs.chmodSync(script, 0o755);
        const input = hosts.map((h) => `${h.context} ${h.ns}`).join('\n') + '\n';
        for (const phase of ['install', 'noop']) {
          const mark = env.auditMark();
          const r = check(await env.run('xargs', ['-P', String(nRel), '-L', '1', script], { input, env: helmEnv }), `helm ${spec.id} ${phase}`);
          const w = env.auditCount(mark, 'helm', belongs).writes;
          if (phase === 'install') {
            samples.pIns.push(r.ms);
            samples.pInsW.push(w);
          } else {
            samples.pNoop.push(r.ms);
            samples.pNoopW.push(w);
            samples.pNewRev.push((await revisions(hosts)) - nRel);
          }
        }
      }
      if (spec.clusterScoped) for (const h of hosts) await env.kubectl(['delete', '--ignore-not-found', '--wait=false', ...spec.clusterScoped(h.ns)], { context: h.context });
      await waitGone(env, byCtx(hosts.map((h) => [h.context, h.ns])));
    }
  }
  const ki = med(samples.kIns);
  const pi = med(samples.pIns);
  const kn = med(samples.kNoop);
  const pn = med(samples.pNoop);
  return [
    { bench: `${spec.label}, install`, kplay_ms: ki, peer_ms: pi, ratio: ratioOf(ki, pi), goal: '<= 1.1x', met: ratioOf(ki, pi) !== null && ratioOf(ki, pi) <= 1.1, kplay_requests: med(samples.kInsReq), kplay_writes: med(samples.kInsW), peer_requests: null, peer_writes: med(samples.pInsW), notes: `kplay requests (besides helm's): ${samples.kInsVerbs}; kplay helm processes ${Math.max(...samples.kInsHelm)} for ${nRel} releases (${['upgrade', 'version'].map((c) => `${c} ${installCalls.filter((x) => x === c).length}`).join(', ')}; goal: one upgrade each, \`helm version\` only the first time a helm binary is seen); peer: helm upgrade --install --wait, ${nRel} in parallel`, samples },
    {
      bench: `${spec.label}, no-op`,
      kplay_ms: kn,
      peer_ms: pn,
      ratio: ratioOf(kn, pn),
      goal: '<= 0.3x, no new revision, 0 helm processes',
      met: ratioOf(kn, pn) !== null && ratioOf(kn, pn) <= 0.3 && Math.max(...samples.kNewRev) === 0 && Math.max(...samples.kNoopHelm) === 0,
      kplay_requests: med(samples.kNoopReq),
      kplay_writes: med(samples.kNoopW),
      peer_requests: null,
      peer_writes: med(samples.pNoopW),
      notes: `kplay helm processes ${Math.max(...samples.kNoopHelm)}; kplay requests: ${samples.kNoopVerbs}; new revisions: kplay ${Math.max(...samples.kNewRev)}, helm ${Math.max(...samples.pNewRev)}`,
    },
  ];
}

// ======================================================================= B5
/** Watch Deployments with kubectl; resolves the timestamp when all `n` are rolled out with generation > gen0. */
function watchRollout(env, ns, n) {
  const child = spawn(
    env.kubectlBin,
    ['--kubeconfig', env.kubeconfig, '--context', 'sandbox-1', 'get', 'deploy', '-n', ns, '-w', '-o', 'jsonpath={.metadata.name} {.metadata.generation} {.status.observedGeneration} {.spec.replicas} {.status.replicas} {.status.updatedReplicas} {.status.readyReplicas} {.status.availableReplicas}{"\\n"}'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const state = new Map();
  let buf = '';
  let lastReady = null;
  let resolveFn;
  const done = new Promise((r) => (resolveFn = r));
  child.stdout.on('data', (d) => {
    const now = Date.now();
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      const [name, gen, obs, want, total, upd, ready, avail] = line.split(' ');
      if (!name) continue;
      const num = (x) => Number(x || 0);
      const ok = num(gen) >= 2 && num(obs) >= num(gen) && num(upd) === num(want) && num(total) === num(want) && num(ready) === num(want) && num(avail) === num(want);
      state.set(name, ok);
      if (state.size >= n && [...state.values()].every(Boolean) && lastReady === null) {
        lastReady = now;
        resolveFn(now);
      }
    }
  });
  return { done, stop: () => child.kill('SIGTERM'), ready: new Promise((r) => setTimeout(r, 300)) };
}

async function b5(env) {
  const nDeps = env.quick ? 3 : 20;
  const samples = { k: [], p: [], kDur: [], pDur: [], kReq: [] };
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'kubectl']) {
      const ns = `${env.runId}-b5-${tool === 'kplay' ? 'kp' : 'kc'}${rep}`;
      const dir = path.join(env.work, 'b5', ns);
      const deps = Array.from({ length: nDeps }, (_, i) => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `d${i}`, namespace: ns, labels: { app: 'b5' } },
        spec: {
          replicas: 2,
          minReadySeconds: 2,
          selector: { matchLabels: { app: `d${i}` } },
          template: { metadata: { labels: { app: `d${i}` } }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } },
        },
      }));
      const f = write(path.join(dir, 'deps.yaml'), yamlDocs([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, ...deps]));
      check(await env.kubectl(['apply', '--server-side', '-f', f]), 'kubectl apply B5');
      check(await env.kubectl(['wait', '-n', ns, '--for=condition=Available', '--timeout=120s', 'deploy', '--all']), 'kubectl wait B5');
      await sleep(2500); // minReadySeconds: let the first rollout settle completely
      const w = watchRollout(env, ns, nDeps);
      await w.ready;
      let r;
      if (tool === 'kplay') {
        const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  tasks:\n    - name: wait for the rollout\n      wait_for:\n        kind: Deployment\n        api_version: apps/v1\n        namespace: ${ns}\n        label_selector: app=b5\n        timeout: 120\n`);
        const inv = write(path.join(dir, 'inv.yml'), inventory(env, [{ name: 'sandbox-1', context: 'sandbox-1' }]));
        check(await env.kubectl(['rollout', 'restart', 'deploy', '-n', ns, '-l', 'app=b5']), 'rollout restart');
        r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '-o', 'json']), 'kplay B5');
        samples.kReq.push(r.stats.requests);
      } else {
        check(await env.kubectl(['rollout', 'restart', 'deploy', '-n', ns, '-l', 'app=b5']), 'rollout restart');
        // kubectl rollout status waits for one Deployment at a time: the usual script loops.
        const script = write(path.join(dir, 'rollout.sh'), `#!/bin/sh\nset -e\nfor i in $(seq 0 ${nDeps - 1}); do "${env.kubectlBin}" --kubeconfig "${env.kubeconfig}" --context sandbox-1 rollout status -n ${ns} deploy/d$i --timeout=120s >/dev/null; done\n`);
        fs.chmodSync(script, 0o755);
        r = check(await env.run(script, []), 'kubectl rollout status');
      }
      const lastReady = await Promise.race([w.done, sleep(30_000).then(() => null)]);
      w.stop();
      if (lastReady === null) throw new Error(`B5: the harness's watch never saw all ${nDeps} Deployments rolled out`);
      const latency = r.endedAt - lastReady;
      samples[tool === 'kplay' ? 'k' : 'p'].push(latency);
      samples[tool === 'kplay' ? 'kDur' : 'pDur'].push(r.ms);
      await waitGone(env, byCtx([['sandbox-1', ns]]));
    }
  }
  const k = med(samples.k);
  const p = med(samples.p);
  return [
    {
      bench: `B5 wait_for ${nDeps} rollouts (latency after last ready)`,
      kplay_ms: k,
      peer_ms: p,
      ratio: ratioOf(k, p),
      goal: 'p50 <= peer + 50 ms',
      met: k !== null && p !== null && k <= p + 50,
      kplay_requests: med(samples.kReq),
      kplay_writes: 0,
      peer_requests: null,
      peer_writes: 0,
      notes: `whole waiter runtime: kplay ${Math.round(med(samples.kDur))} ms, kubectl ${Math.round(med(samples.pDur))} ms; peer: kubectl rollout status per Deployment`,
      samples,
    },
  ];
}

// ======================================================================= B6
async function startHaproxy(dir, servers) {
  fs.mkdirSync(dir, { recursive: true });
  const sock = path.join(dir, 'admin.sock');
  const cfg = write(
    path.join(dir, 'haproxy.cfg'),
    ['global', `  stats socket ${sock} level admin`, '  maxconn 100', 'defaults', '  mode http', '  timeout connect 1s', '  timeout client 5s', '  timeout server 5s', 'backend be_bench', ...servers.map((s) => `  server ${s} 127.0.0.1:9`), ''].join('\n'),
  );
  // no frontend and no health checks: HAProxy sends no traffic, the servers just change state
  const child = spawn('haproxy', ['-f', cfg, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const deadline = Date.now() + 10_000;
  while (!fs.existsSync(sock)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`haproxy did not start: ${err}`);
    await sleep(50);
  }
  const cmd = (c) =>
    new Promise((resolve, reject) => {
      const s = net.connect(sock);
      let out = '';
      s.on('data', (d) => (out += d));
      s.on('end', () => resolve(out));
      s.on('error', reject);
      s.end(`${c}\n`);
    });
  return { sock, cmd, stop: () => child.kill('SIGTERM') };
}

async function b6(env) {
  const n = env.quick ? 10 : 50;
  const servers = Array.from({ length: n }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);
  const samples = { k: [], p: [] };
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'ansible']) {
      const dir = path.join(env.work, 'b6', `${tool}${rep}`);
      const hp = await startHaproxy(dir, servers);
      try {
        let r;
        if (tool === 'kplay') {
          const pb = write(
            path.join(dir, 'play.yml'),
            `- hosts: all\n  tasks:\n${['drain', 'ready'].map((st) => `    - name: ${st}\n      lb_switch:\n        provider: haproxy\n        socket: ${hp.sock}\n        backend: be_bench\n        server: "{{ item }}"\n        state: ${st}\n      loop: ${JSON.stringify(servers)}`).join('\n')}\n`,
          );
          const inv = write(path.join(dir, 'inv.yml'), inventory(env, [{ name: 'sandbox-1', context: 'sandbox-1' }]));
          r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '-o', 'json']), 'kplay B6');
          samples.k.push(r.ms);
        } else {
          const pb = write(
            path.join(dir, 'play.yml'),
            `- hosts: all\n  gather_facts: false\n  tasks:\n${[['drain', 'drain'], ['ready', 'enabled']].map(([n1, st]) => `    - name: ${n1}\n      community.general.haproxy:\n        socket: ${hp.sock}\n        backend: be_bench\n        host: "{{ item }}"\n        state: ${st}\n      loop: ${JSON.stringify(servers)}`).join('\n')}\n`,
          );
          const inv = write(path.join(dir, 'inv.yml'), ansibleInventory(env, [{ name: 'localhost' }]));
          r = check(await ansible(env, [pb, '-i', inv]), 'ansible-playbook B6');
          samples.p.push(r.ms);
        }
        const stateText = await hp.cmd('show servers state be_bench');
        const notReady = stateText.split('\n').filter((l) => /^\d+ be_bench /.test(l)).filter((l) => l.split(' ')[6] !== '0');
        if (notReady.length) throw new Error(`B6 ${tool}: servers not back to ready: ${notReady.slice(0, 3).join(' | ')}`);
      } finally {
        hp.stop();
      }
    }
  }
  const k = med(samples.k);
  const p = med(samples.p);
  return [{ bench: `B6 lb_switch drain+ready ${n} HAProxy servers`, kplay_ms: k, peer_ms: p, ratio: ratioOf(k, p), goal: '<= 0.2x', met: ratioOf(k, p) !== null && ratioOf(k, p) <= 0.2, kplay_requests: null, kplay_writes: null, peer_requests: null, peer_writes: null, notes: 'peer: ansible-playbook + community.general.haproxy', samples }];
}

/**
 * B7: start-up and load cost, against `node -e 0` on the same machine (no cluster involved):
 * `kplay --help`, `kplay validate` of a 200-task playbook, and `kplay run` of a one-task playbook
 * on a local inventory entry. Goal (issue #13): validate of 200 tasks < 2x `kplay --help`.
 */
async function b7(env) {
  const dir = path.join(env.work, 'b7');
  const tasks = Array.from({ length: 200 }, (_, i) => `    - name: task ${i}\n      debug: { msg: "step ${i} on {{ cluster_name }}" }\n      when: step_${i % 7} is not defined`).join('\n');
  write(path.join(dir, 'big.yml'), `- hosts: all\n  tasks:\n${tasks}\n`);
  write(path.join(dir, 'one.yml'), '- hosts: all\n  tasks:\n    - debug: { msg: hi }\n');
  write(path.join(dir, 'inventory.yml'), 'all:\n  clusters:\n    local: {}\n');
  // a role tree of 200 tasks as Ansible repositories lay one out (issue #49): 10 roles, each with
  // defaults, a handler, a dependency on the previous role, and tasks/main.yml importing two task
  // files of 10 tasks each (one static import, one dynamic include, both checked by validate)
  for (let r = 0; r < 10; r++) {
    const role = path.join(dir, 'roles', `role${r}`);
    write(path.join(role, 'defaults/main.yml'), `role${r}_greeting: hello ${r}\n`);
    write(path.join(role, 'handlers/main.yml'), `- name: restart ${r}\n  debug: { msg: restarted }\n`);
    write(path.join(role, 'meta/main.yml'), r === 0 ? 'dependencies: []\n' : `dependencies:\n  - role: role${r - 1}\n`);
    write(path.join(role, 'tasks/main.yml'), '- import_tasks: first.yml\n- include_tasks: second.yml\n');
    for (const part of ['first', 'second']) {
      const body = Array.from({ length: 10 }, (_, i) => `- name: ${part} ${i} of role ${r}\n  debug: { msg: "{{ role${r}_greeting }} {{ inventory_hostname }}" }\n  when: step_${i % 5} is not defined\n  notify: restart ${r}`).join('\n');
      write(path.join(role, `tasks/${part}.yml`), `${body}\n`);
    }
  }
  write(path.join(dir, 'roles.yml'), `- hosts: all\n  roles:\n${Array.from({ length: 10 }, (_, r) => `    - role${r}`).join('\n')}\n`);
  const reps = Math.max(5, env.reps * 3);
  const time = async (args, what) => {
    const samples = [];
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      check(await env.run(process.execPath, args, { cwd: dir }), what);
      samples.push(performance.now() - t0);
    }
    return med(samples);
  };
  const node = await time(['-e', '0'], 'node -e 0');
  const help = await time([env.kplayBin, '--help'], 'kplay --help');
  const validate = await time([env.kplayBin, 'validate', 'big.yml', '-i', 'inventory.yml'], 'kplay validate');
  const roles = await time([env.kplayBin, 'validate', 'roles.yml', '-i', 'inventory.yml'], 'kplay validate (role tree)');
  const one = await time([env.kplayBin, 'run', 'one.yml', '-i', 'inventory.yml', '--no-lock', '--record-dir', path.join(dir, 'records')], 'kplay run');
  const row = (bench, ms, peerMs, goal, met, notes) => ({ bench, kplay_ms: ms, peer_ms: peerMs, ratio: ratioOf(ms, peerMs), goal, met, kplay_requests: null, kplay_writes: null, peer_requests: null, peer_writes: null, notes });
  return [
    row('B7 kplay --help vs node -e 0', help, node, '', null, 'Node start-up is the floor'),
    row('B7 kplay validate of 200 tasks vs kplay --help', validate, help, '< 2', validate !== null && help !== null ? validate / help < 2 : null, 'schema compiled once per process'),
    row('B7 kplay validate of a 200-task role tree vs kplay --help', roles, help, '<= 1.3', roles !== null && help !== null ? roles / help <= 1.3 : null, '10 roles: defaults, handlers, meta dependencies, import_tasks + include_tasks (issue #49)'),
    row('B7 kplay run of 1 local task vs node -e 0', one, node, '', null, 'load + inventory + run + record'),
  ];
}

// ======================================================================= B8
/**
 * B8: a big vendor-style manifest set (10 large CRDs with CRs, RBAC, workloads, an APIService
 * nothing serves; generated by the corpus fixture test/fixtures/corpus/big-set.ts), cold then
 * no-op, one `k8s_apply` task against kubectl as ops apply such a set: CRDs, wait Established,
 * the rest.
 */
async function b8(env) {
  const { tsImport } = await import('tsx/esm/api');
  const { bigManifestSet } = await tsImport(path.join(env.repoRoot, 'test/fixtures/corpus/big-set.ts'), import.meta.url);
  const size = env.quick ? { crds: 2, crsPerCrd: 2, workloads: 3 } : { crds: 10, crsPerCrd: 5, workloads: 21 };
  // no-op goal: issue 31 (a held-out vendor set of B8's shape), tighter than issue 13's 0.5x
  return manifestSetBench(env, { id: 'b8', make: bigManifestSet, size, label: (total) => `B8 big set ${total} objects (${size.crds} large CRDs)`, groupOf: (suffix) => [`big${suffix}.corpus.kplay.test`], noopGoal: 0.3 });
}

/**
 * B8b: the shapes of public vendor sets mixed in one file (test/fixtures/corpus/vendor-shapes.ts:
 * cert-manager / prometheus-operator CRDs with very large schemas, 20 small Calico-like CRDs,
 * 100 Crossplane/Istio-like custom resources with large specs, 32 cluster RBAC objects of which
 * 4 aggregated ClusterRoles, controllers, webhooks), cold then no-op, against kubectl as for B8.
 */
async function b8b(env) {
  const { tsImport } = await import('tsx/esm/api');
  const { vendorManifestSet } = await tsImport(path.join(env.repoRoot, 'test/fixtures/corpus/vendor-shapes.ts'), import.meta.url);
  const size = env.quick ? { largeCrds: 2, smallCrds: 3, crs: 10, clusterRoles: 4, deployments: 1 } : {};
  return manifestSetBench(env, {
    id: 'b8b',
    make: vendorManifestSet,
    size,
    label: (total, set) => `B8b vendor shapes ${total} objects (${set.crds.length} CRDs)`,
    groupOf: (suffix) => [`vendor${suffix}.corpus.kplay.test`, `net${suffix}.corpus.kplay.test`],
    noopGoal: 0.3, // issue 31
  });
}

/**
 * A manifest set from a corpus generator `make(ns, suffix, size)` in one `k8s_apply` task, cold
 * then no-op, against kubectl as ops apply such a set: CRDs, wait Established, the rest (B8, B8b).
 */
async function manifestSetBench(env, spec) {
  const { parseAllDocuments } = await import('yaml');
  const { size } = spec;
  let lastSet;
  const samples = { kCold: [], kNoop: [], pCold: [], pNoop: [], kColdReq: [], kNoopReq: [], kColdW: [], kNoopW: [], kNoopDry: [], pColdReq: [], pNoopReq: [], pColdW: [], pNoopW: [] };
  let total = 0;
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'kubectl']) {
      const suffix = `${env.runId}-${spec.id}-${tool === 'kplay' ? 'kp' : 'kc'}${rep}`;
      const ns = suffix;
      const set = spec.make(ns, suffix, size);
      total = set.count;
      lastSet = set;
      const groups = spec.groupOf(suffix);
      const dir = path.join(env.work, spec.id, suffix);
      const all = write(path.join(dir, 'set.yaml'), set.text);
      const docs = parseAllDocuments(set.text).map((d) => d.toJSON()).filter(Boolean);
      const crdFile = write(path.join(dir, 'crds.yaml'), yamlDocs(docs.filter((d) => d.kind === 'CustomResourceDefinition')));
      const restFile = write(path.join(dir, 'rest.yaml'), yamlDocs(docs.filter((d) => d.kind !== 'CustomResourceDefinition')));
      const belongs = (e) => {
        const r = e.objectRef ?? {};
        return r.namespace === ns || groups.includes(r.apiGroup) || String(r.name ?? '').includes(suffix);
      };
      // The namespace exists before either tool runs (untimed), as for a vendor set that names none.
      check(await env.kubectl(['create', 'namespace', ns]), 'kubectl create namespace');
      try {
        if (tool === 'kplay') {
          const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  tasks:\n    - name: apply ${total} objects\n      k8s_apply:\n        src: ${all}\n        namespace: ${ns}\n`);
          const inv = write(path.join(dir, 'inv.yml'), inventory(env, [{ name: 'sandbox-1', context: 'sandbox-1' }]));
          for (const phase of ['cold', 'noop']) {
            if (phase === 'noop') await settle(env, 'sandbox-1', ns);
            const mark = env.auditMark();
            const r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '-o', 'json']), `kplay ${spec.id} ${phase}`);
            const a = env.auditCount(mark, 'kplay', belongs);
            const key = phase === 'cold' ? 'kCold' : 'kNoop';
            samples[key].push(r.ms);
            samples[`${key}Req`].push(r.stats.requests);
            samples[`${key}W`].push(a.writes);
            samples[`${key}Verbs`] = verbs(r.stats);
            if (phase === 'noop') samples.kNoopDry.push(a.dryRuns);
          }
        } else {
          const k = (args) => env.kubectl(['-v=6', ...args]);
          let mark = env.auditMark();
          const t0 = performance.now();
          const r1 = check(await k(['apply', '--server-side', '-f', crdFile]), 'kubectl apply CRDs');
          const r2 = check(await k(['wait', '--for=condition=Established', '--timeout=60s', ...set.crds.map((n) => `crd/${n}`)]), 'kubectl wait');
          const r3 = check(await k(['apply', '--server-side', '-n', ns, '-f', restFile]), 'kubectl apply');
          samples.pCold.push(performance.now() - t0);
          samples.pColdReq.push(sum([r1, r2, r3].map((r) => env.kubectlRequests(r.stderr))));
          samples.pColdW.push(env.auditCount(mark, 'kubectl', belongs).writes);
          await settle(env, 'sandbox-1', ns);
          mark = env.auditMark();
          const r4 = check(await k(['apply', '--server-side', '-n', ns, '-f', all]), 'kubectl apply no-op');
          samples.pNoop.push(r4.ms);
          samples.pNoopReq.push(env.kubectlRequests(r4.stderr));
          samples.pNoopW.push(env.auditCount(mark, 'kubectl', belongs).writes);
        }
      } finally {
        // The unserved APIService goes first: while it exists, every discovery sees a broken group.
        await env.kubectl(['delete', '--ignore-not-found', '--wait=false', ...set.clusterScoped]);
        await env.kubectl(['wait', '--for=delete', '--timeout=120s', ...set.crds.map((n) => `crd/${n}`)]);
        await waitGone(env, byCtx([['sandbox-1', ns]]));
      }
    }
  }
  const rows = [];
  const kc = med(samples.kCold);
  const pc = med(samples.pCold);
  rows.push({
    bench: `${spec.label(total, lastSet)}, cold`,
    kplay_ms: kc,
    peer_ms: pc,
    ratio: ratioOf(kc, pc),
    goal: '<= 0.5x',
    met: ratioOf(kc, pc) !== null && ratioOf(kc, pc) <= 0.5,
    kplay_requests: med(samples.kColdReq),
    kplay_writes: med(samples.kColdW),
    peer_requests: med(samples.pColdReq),
    peer_writes: med(samples.pColdW),
    notes: `kplay requests: ${samples.kColdVerbs}; peer: kubectl apply --server-side (CRDs, wait Established, rest)`,
    samples,
  });
  const kn = med(samples.kNoop);
  const pn = med(samples.pNoop);
  const noopW = Math.max(...samples.kNoopW);
  rows.push({
    bench: `${spec.label(total, lastSet)}, no-op`,
    kplay_ms: kn,
    peer_ms: pn,
    ratio: ratioOf(kn, pn),
    goal: `<= ${spec.noopGoal ?? 0.5}x, 0 writes`,
    met: ratioOf(kn, pn) !== null && ratioOf(kn, pn) <= (spec.noopGoal ?? 0.5) && noopW === 0,
    kplay_requests: med(samples.kNoopReq),
    kplay_writes: noopW,
    peer_requests: med(samples.pNoopReq),
    peer_writes: med(samples.pNoopW),
    notes: `kplay requests: ${samples.kNoopVerbs}; audited dry-runs: ${Math.max(...samples.kNoopDry)}; peer: kubectl apply --server-side -f FILE`,
  });
  return rows;
}

// ======================================================================= B9
/**
 * B9: the expression language — 100,000 evaluations (a mix of `when`-style conditions and
 * argument templates written as Ansible playbooks write them) by kplay's engine vs ansible-core's
 * own templar, each in one process, the loop timed inside it (start-up excluded on both sides).
 * Goal (issue 29): <= 0.1x.
 */
async function b9(env) {
  const vars = {
    replicas: 3, env: 'prod', name: 'web', flags: { canary: false }, items: [{ name: 'a', port: 80 }, { name: 'b', port: 443 }],
    result: { changed: true, failed: false, rc: 0, stdout_lines: ['x', 'y'] }, labels: { app: 'web', tier: 'frontend' }, version: '1.28.3',
  };
  const conds = [
    'replicas | default(2) > 1', 'env in ["prod", "staging"] and not flags.canary', 'missing is not defined or missing.y == 1',
    'result is changed and result.rc == 0', 'result.stdout_lines | length > 0', "version is version('1.27', '>=')",
    "items | selectattr('port', 'equalto', 443) | list | length == 1", "labels.app == name and 'tier' in labels",
  ];
  const templates = [
    '{{ replicas | default(2) }}', "{{ name ~ '-' ~ env }}", "{{ items | map(attribute='name') | join(',') }}",
    "{{ 'big' if replicas > 2 else 'small' }}", 'app={{ labels.app }} tier={{ labels.tier | upper }}', "{{ labels | dict2items | map(attribute='key') | list }}",
  ];
  const total = env.quick ? 2_000 : 100_000;
  const rounds = Math.ceil(total / (conds.length + templates.length));
  const input = JSON.stringify({ vars, conds, templates, rounds });
  const samples = { k: [], p: [] };
  for (let rep = 0; rep < env.reps; rep++) {
    const k = check(await env.run(process.execPath, [path.join(env.repoRoot, 'test/bench/expr-bench.mjs')], { input }), 'kplay expressions');
    samples.k.push(JSON.parse(k.stdout).seconds * 1000);
    const p = check(await env.run(path.join(env.venv, 'bin/python'), [path.join(env.repoRoot, 'test/bench/expr_bench.py')], { input, timeoutMs: 1_800_000 }), 'ansible templar');
    samples.p.push(JSON.parse(p.stdout).seconds * 1000);
  }
  const k = med(samples.k);
  const p = med(samples.p);
  const ratio = ratioOf(k, p);
  return [{ bench: `B9 ${rounds * (conds.length + templates.length)} expressions`, kplay_ms: k, peer_ms: p, ratio, goal: '<= 0.1x', met: ratio !== null && ratio <= 0.1, kplay_requests: null, kplay_writes: null, peer_requests: null, peer_writes: null, notes: 'peer: ansible-core Templar.evaluate_conditional / template in one process; loop time only', samples }];
}

// ======================================================================= B10
/**
 * B10: one Ansible playbook, unchanged, under both engines: `kubernetes.core.k8s` with
 * definitions, a `template:` (Jinja loop and condition) and `src:`, loops over lists and
 * dict2items, a Deployment applied with `wait: yes`, `k8s_info` + `register` + `assert`,
 * `set_fact` with `json_query`/`selectattr`, `debug`; a second pass of the same objects (the
 * converged case). Shapes from test/fixtures/kcore (rollout, loops, template_src, facts),
 * copied here. One Ansible YAML inventory for both (hosts with `ctx`/`kc` vars, which
 * `module_defaults` hands to the kubernetes.core group; `kplay_context`/`kplay_kubeconfig`
 * tell kplay where each host's run record goes: Ansible ignores them).
 */
const B10_PLAYBOOK = `# B10 (test/bench/benches.mjs): an Ansible playbook run unchanged by ansible-playbook and kplay
- hosts: all
  gather_facts: false
  module_defaults:
    group/kubernetes.core.k8s:
      kubeconfig: "{{ kc }}"
      context: "{{ ctx }}"
  vars:
    app_name: shop
    replicas: 2
    image_repo: registry.k8s.io/pause
    image_tag: "3.10"
    extra_labels: { owner: platform, cost-center: "1234" }
    env_vars: { MODE: production, WORKERS: 4 }
    tiers:
      - { name: front, port: 8080 }
      - { name: back, port: 9090 }
    services:
      - { name: cart, port: 8081 }
      - { name: checkout, port: 8082 }
      - { name: search, port: 8083 }
    feature_flags: { dark_mode: "on", beta_api: "off", new_cart: "on" }
  tasks:
    - name: namespace
      kubernetes.core.k8s:
        api_version: v1
        kind: Namespace
        name: "{{ ns }}"
        state: present
    - name: application settings
      kubernetes.core.k8s:
        state: present
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata:
            name: "{{ app_name }}-config"
            namespace: "{{ ns }}"
            labels: { app: "{{ app_name }}" }
          data:
            LOG_LEVEL: info
            FEATURE_X: "true"
      register: cm
    - name: rbac from a file
      kubernetes.core.k8s:
        src: rbac.yml
        namespace: "{{ ns }}"
    - name: a config map and a service per tier
      kubernetes.core.k8s:
        template: stack.yml.j2
      register: stack
    - name: one service per backend
      kubernetes.core.k8s:
        definition:
          apiVersion: v1
          kind: Service
          metadata: { name: "{{ item.name }}", namespace: "{{ ns }}", labels: { part-of: "{{ app_name }}" } }
          spec: { selector: { app: "{{ item.name }}" }, ports: [{ port: 80, targetPort: "{{ item.port }}" }] }
      loop: "{{ services }}"
      loop_control: { label: "{{ item.name }}" }
      register: svcs
    - name: a flag per config map
      kubernetes.core.k8s:
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata: { name: "flag-{{ item.key | replace('_', '-') }}", namespace: "{{ ns }}", labels: { kind: flag } }
          data: { value: "{{ item.value }}" }
      loop: "{{ feature_flags | dict2items }}"
      loop_control: { label: "{{ item.key }}" }
    - name: deploy the application and wait for it
      kubernetes.core.k8s:
        state: present
        template: web-deployment.yml.j2
        wait: yes
        wait_timeout: 120
      register: deploy
    - name: read the deployment back
      kubernetes.core.k8s_info:
        api_version: apps/v1
        kind: Deployment
        name: "{{ app_name }}"
        namespace: "{{ ns }}"
      register: info
    - name: read the flags
      kubernetes.core.k8s_info:
        kind: ConfigMap
        namespace: "{{ ns }}"
        label_selectors: [kind=flag]
      register: flags
    - name: facts from what was read
      set_fact:
        flag_names: "{{ flags.resources | json_query('[].metadata.name') | sort }}"
        enabled: "{{ flags.resources | selectattr('data.value', 'equalto', 'on') | map(attribute='metadata.name') | sort }}"
        ready: "{{ info.resources[0].status.readyReplicas | default(0) }}"
    - name: the rollout is complete
      assert:
        that:
          - info.resources | length == 1
          - ready | int == replicas
          - info.resources[0].spec.template.spec.containers[0].image == image_repo ~ ':' ~ image_tag
          - flag_names | length == feature_flags | length
          - enabled | length == 2
          - deploy.result.metadata.name == app_name
        fail_msg: "{{ app_name }} is not ready in {{ ns }}"
        success_msg: "{{ app_name }} is ready in {{ ns }}"
    - name: the same objects again (converged)
      kubernetes.core.k8s:
        definition:
          apiVersion: v1
          kind: ConfigMap
          metadata: { name: "flag-{{ item.key | replace('_', '-') }}", namespace: "{{ ns }}", labels: { kind: flag } }
          data: { value: "{{ item.value }}" }
      loop: "{{ feature_flags | dict2items }}"
      loop_control: { label: "{{ item.key }}" }
      register: again
    - name: summary
      debug:
        msg: "{{ inventory_hostname }}: cm={{ cm.result.metadata.name }} stack={{ stack.result.results | default([stack.result]) | length }} services={{ svcs.results | map(attribute='item.name') | join(',') }} ready={{ ready }} enabled={{ enabled | join(',') }} again_changed={{ again.changed }}"
`;

/** The template and file B10 reads, in the shapes of test/fixtures/kcore/templates and files (copied). */
function b10Inputs(env, dir) {
  for (const [rel, from] of [
    ['templates/web-deployment.yml.j2', 'test/fixtures/kcore/templates/web-deployment.yml.j2'],
    ['templates/stack.yml.j2', 'test/fixtures/kcore/templates/stack.yml.j2'],
    ['files/rbac.yml', 'test/fixtures/kcore/files/rbac.yml'],
  ]) write(path.join(dir, rel), fs.readFileSync(path.join(env.repoRoot, from), 'utf8'));
  return write(path.join(dir, 'play.yml'), B10_PLAYBOOK);
}

async function b10(env) {
  const nClusters = env.quick ? 3 : 10;
  const samples = { k: [], p: [], kReq: [], kW: [], pW: [], kVerbs: '' };
  const dir = path.join(env.work, 'b10');
  const pb = b10Inputs(env, dir);
  for (let rep = 0; rep < env.reps; rep++) {
    for (const tool of ['kplay', 'ansible']) {
      const prefix = `${env.runId}-b10-${tool[0]}${rep}`;
      const hosts = Array.from({ length: nClusters }, (_, i) => ({ name: `c${String(i + 1).padStart(2, '0')}`, context: env.clusters[i % env.clusters.length].context, ns: `${prefix}-c${i + 1}` }));
      const belongs = (e) => String(e.objectRef?.namespace ?? '').startsWith(prefix) || (e.objectRef?.resource === 'namespaces' && String(e.objectRef?.name).startsWith(prefix));
      // one inventory for both engines (Ansible YAML; kplay reads it as Ansible hosts)
      const inv = write(path.join(dir, `inv-${prefix}.yml`), ansibleInventory(env, hosts.map((h) => ({ name: h.name, vars: { ns: h.ns, ctx: h.context, kc: env.kubeconfig, kplay_context: h.context, kplay_kubeconfig: env.kubeconfig } }))));
      const mark = env.auditMark();
      if (tool === 'kplay') {
        const r = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '--forks', '10', '-o', 'json'], { cwd: dir }), 'kplay B10');
        samples.k.push(r.ms);
        samples.kReq.push(r.stats.requests);
        samples.kW.push(env.auditCount(mark, 'kplay', belongs).writes);
        samples.kVerbs = verbs(r.stats);
      } else {
        const r = check(await ansible(env, [pb, '-i', inv, '--forks', '10'], { cwd: dir }), 'ansible-playbook B10');
        samples.p.push(r.ms);
        samples.pW.push(env.auditCount(mark, 'OpenAPI-Generator', belongs).writes);
      }
      await waitGone(env, byCtx(hosts.map((h) => [h.context, h.ns])));
    }
  }
  const k = med(samples.k);
  const p = med(samples.p);
  const ratio = ratioOf(k, p);
  return [
    {
      bench: `B10 kubernetes.core playbook x ${nClusters} clusters`,
      kplay_ms: k,
      peer_ms: p,
      ratio,
      goal: '<= 0.1x',
      met: ratio !== null && ratio <= 0.1,
      kplay_requests: med(samples.kReq),
      kplay_writes: med(samples.kW),
      peer_requests: null,
      peer_writes: med(samples.pW),
      notes: `the same playbook and inventory for both; 13 tasks, 16 objects (19 applies) per cluster, one wait for a rollout; kplay requests: ${samples.kVerbs}; peer: ansible-playbook --forks 10`,
      samples,
    },
  ];
}

// ======================================================================= B11
/** Quote for sh -c. */
const shq = (s) => `'${String(s).replaceAll("'", `'\\''`)}'`;

/**
 * The live board's cost: the same window (N inventory clusters spread over the sandbox clusters, after an untimed
 * warm-up window, serial batches of 10, a namespace and two ConfigMaps each) run in a pseudo-terminal
 * (`script -qfec`, 80×24) with `--progress board` ("kplay") and `--progress plain` ("peer"),
 * alternately; wall time ratio and peak RSS difference (GNU time around script: the largest process).
 */
async function b11(env) {
  const nClusters = env.quick ? 20 : 100;
  const samples = { k: [], p: [], kRss: [], pRss: [] };
  // an untimed warm-up run first: the first window after the harness starts is slower (caches, controllers)
  for (let rep = -1; rep < env.reps; rep++) {
    for (const mode of rep < 0 ? ['plain'] : ['board', 'plain']) {
      const prefix = `${env.runId}-b11-${mode}-${rep < 0 ? 'warm' : rep}`;
      const dir = path.join(env.work, 'b11', prefix);
      const hosts = Array.from({ length: nClusters }, (_, i) => ({ name: `c${String(i + 1).padStart(3, '0')}`, context: env.clusters[i % env.clusters.length].context, ns: `${prefix}-c${i + 1}` }));
      const pb = write(
        path.join(dir, 'play.yml'),
        `- name: window\n  hosts: all\n  serial: 10\n  tasks:\n    - name: namespace\n      k8s_apply:\n        definition: { apiVersion: v1, kind: Namespace, metadata: { name: "{{ ns }}" } }\n` +
          [1, 2].map((t) => `    - name: configmap ${t}\n      k8s_apply:\n        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: cm-${t}, namespace: "{{ ns }}" }, data: { index: "${t}" } }\n`).join(''),
      );
      const inv = write(path.join(dir, 'inv.yml'), inventory(env, hosts.map((h) => ({ name: h.name, context: h.context, vars: { ns: h.ns } }))));
      const cmd = `stty cols 80 rows 24; exec ${shq(process.execPath)} ${shq(env.kplayBin)} run ${shq(pb)} -i ${shq(inv)} --no-lock --progress ${mode} --record-dir ${shq(path.join(dir, 'runs'))}`;
      const r = check(await env.run('script', ['-qfec', cmd, '/dev/null'], { timeRss: true, tmpDir: dir, env: { TERM: 'xterm-256color' } }), `kplay B11 --progress ${mode}`);
      if (mode === 'board' && !/batch \d+\/\d+ · /.test(r.stdout)) throw new Error(`B11: no board drawn in the pty:\n${r.stdout.slice(-2000)}`);
      if (rep >= 0) {
        (mode === 'board' ? samples.k : samples.p).push(r.ms);
        (mode === 'board' ? samples.kRss : samples.pRss).push(r.rssKiB);
      }
      await waitGone(env, byCtx(hosts.map((h) => [h.context, h.ns])), 300_000);
    }
  }
  const k = med(samples.k);
  const p = med(samples.p);
  const ratio = ratioOf(k, p);
  const rssDiffMiB = (med(samples.kRss) - med(samples.pRss)) / 1024;
  return [
    {
      bench: `B11 live board, window of ${nClusters} clusters (board vs plain, in a pty)`,
      kplay_ms: k,
      peer_ms: p,
      ratio,
      goal: '<= 1.05x, RSS +<= 20 MB',
      met: ratio !== null && ratio <= 1.05 && rssDiffMiB <= 20,
      kplay_requests: null,
      kplay_writes: null,
      peer_requests: null,
      peer_writes: null,
      notes: `peak RSS board ${(med(samples.kRss) / 1024).toFixed(0)} MiB, plain ${(med(samples.pRss) / 1024).toFixed(0)} MiB (difference ${rssDiffMiB.toFixed(1)} MiB); serial 10, 3 tasks a cluster; peer: the same run with --progress plain`,
      samples,
    },
  ];
}

// ======================================================================= B12
/**
 * The analysis gate's stop latency: a release (a ConfigMap) applied and gated on a real Prometheus
 * (`interval: 1`, `failure_limit: 0`, `result < 0.01`) scraping a stand-in exporter every second;
 * the exporter's error ratio goes bad when the gate task starts (seen on `--output json`). The
 * latency runs from the first bad sample, by its Prometheus (scrape) timestamp, to the `at` of the
 * gate's failing measurement in its task result: timestamps of the systems measured, not of this
 * harness. No peer can run here (Argo Rollouts needs its controller in a real cluster): the
 * reference is the issue's bound, interval + scrape interval.
 */
async function b12(env) {
  const interval = 1;
  const reps = Math.max(env.reps, env.quick ? 2 : 5);
  const bad = 0.5;
  const good = 0.001;
  const exporter = await startExporter(good);
  const prom = await startPrometheus(new URL(exporter.server.url).host);
  const latencies = [];
  try {
    const dir = path.join(env.work, 'b12');
    const pb = write(
      path.join(dir, 'gate.yml'),
      [
        '- hosts: all',
        '  any_errors_fatal: true',
        '  tasks:',
        '    - block:',
        '        - name: release',
        '          k8s_apply:',
        '            definition:',
        '              - { apiVersion: v1, kind: Namespace, metadata: { name: "{{ ns }}" } }',
        '              - { apiVersion: v1, kind: ConfigMap, metadata: { name: web, namespace: "{{ ns }}" }, data: { version: v2 } }',
        '        - name: gate',
        '          analysis:',
        `            interval: ${interval}`,
        '            count: 60',
        '            failure_limit: 0',
        '            metrics:',
        '              - name: error-ratio',
        '                prometheus: { address: "{{ prometheus_url }}", query: app_error_ratio }',
        '                success_condition: result < 0.01',
        '      rescue:',
        '        - name: roll back',
        '          k8s_apply:',
        '            definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: web, namespace: "{{ ns }}" }, data: { version: rolled-back } }',
        '        - fail: { msg: gate failed }',
        '',
      ].join('\n'),
    );
    const namespaces = [];
    for (let rep = 0; rep < reps; rep++) {
      exporter.ratios.set('a', good);
      await waitForQuery(prom.url, 'app_error_ratio', (v) => v[0] === good);
      const ns = `${env.runId}-b12-${rep}`;
      namespaces.push(ns);
      const inv = write(path.join(dir, `inv-${rep}.yml`), inventory(env, [{ name: 'eu-1', context: env.clusters[0].context, vars: { ns, prometheus_url: prom.url } }]));
      let seen = '';
      const r = await env.run(process.execPath, [env.kplayBin, 'run', pb, '-i', inv, '--no-lock', '--output', 'json', '--record-dir', path.join(dir, 'runs')], {
        onStdout: (d) => {
          seen += d;
          if (exporter.ratios.get('a') === good && /"type":"task_start"[^\n]*"task":"gate"/.test(seen)) exporter.ratios.set('a', bad);
        },
      });
      const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      const gate = events.find((e) => e.type === 'task_result' && e.task === 'gate');
      const ms = gate?.data?.measurements ?? [];
      const failed = ms.findIndex((m) => m.verdict === 'failed');
      if (r.code === 0 || gate?.status !== 'failed' || failed !== ms.length - 1 || ms[failed].value !== bad) {
        throw new Error(`B12: the gate did not fail on the bad value as expected (exit ${r.code})\n${(r.stdout + r.stderr).slice(-3000)}`);
      }
      const stop = Date.parse(ms[failed].at);
      const before = (await samples(prom.url, 'app_error_ratio')).filter((x) => x.ms <= stop);
      const lastGood = before.findLastIndex((x) => x.value !== bad);
      const first = before[lastGood + 1];
      if (lastGood < 0 || first?.value !== bad) throw new Error(`B12: no good-then-bad samples before the gate failed: ${JSON.stringify(before.slice(-5))}`);
      latencies.push(stop - first.ms);
    }
    await waitGone(env, byCtx(namespaces.map((n) => [env.clusters[0].context, n])));
  } finally {
    await prom.stop();
    await exporter.server.close();
  }
  const k = med(latencies);
  const bound = (interval + SCRAPE_INTERVAL_S) * 1000;
  const ratio = ratioOf(k, bound);
  return [
    {
      bench: 'B12 gate stop latency (first bad scrape to gate failed)',
      kplay_ms: k,
      peer_ms: bound,
      ratio,
      goal: '<= 1.0x (interval + scrape interval)',
      met: ratio !== null && Math.max(...latencies) <= bound,
      kplay_requests: null,
      kplay_writes: null,
      peer_requests: null,
      peer_writes: null,
      notes: `${reps} reps, latencies ${latencies.map((x) => x.toFixed(0)).join(', ')} ms (max ${Math.max(...latencies).toFixed(0)}); interval ${interval} s, scrape ${SCRAPE_INTERVAL_S} s, failure_limit 0; peer: the bound interval + scrape interval (Argo Rollouts cannot run here)`,
      samples: { k: latencies },
    },
  ];
}

// ======================================================================= B13
/**
 * Fleet simulation (issue #36): one window over many inventory entries (spread over the sandbox's
 * apiservers, `serial: 10%` so the fleet's batch barrier is exercised, a read and a local task per
 * entry) run as 10 shards sharing one fleet run (its ConfigMap in sandbox-1) vs 1 process.
 * Wall time: the 10 shards launched together until the last exits. Memory: peak RSS per shard.
 */
async function b13(env) {
  const nEntries = env.quick ? 60 : 1000;
  const nShards = 10;
  const samples = { k: [], p: [], kRss: [], pRss: [] };
  const hosts = Array.from({ length: nEntries }, (_, i) => ({ name: `store-${String(i).padStart(4, '0')}`, context: env.clusters[i % env.clusters.length].context }));
  const dir = path.join(env.work, 'b13');
  const pb = write(path.join(dir, 'play.yml'), `- hosts: all\n  serial: "10%"\n  max_fail_percentage: 5\n  tasks:\n    - name: read\n      k8s_info: { kind: Namespace, name: default }\n      register: ns\n    - name: check\n      assert: { that: ["ns.resources | length == 1"] }\n`);
  const inv = write(path.join(dir, 'inv.yml'), inventory(env, hosts));
  const fleetNs = `${env.runId}-b13`;
  await env.kubectl(['create', 'namespace', fleetNs]);
  try {
    for (let rep = 0; rep < env.reps; rep++) {
      const one = check(await env.kplay(['run', pb, '-i', inv, '--no-lock', '--forks', '25', '-o', 'json'], { timeRss: true, tmpDir: dir, env: { KPLAY_RECORD_DIR: path.join(dir, `rec-one-${rep}`) } }), 'kplay B13 one process');
      samples.p.push(one.ms);
      samples.pRss.push(one.rssKiB);
      const t0 = performance.now();
      const shards = await Promise.all(
        Array.from({ length: nShards }, (_, i) =>
          env.kplay(['run', pb, '-i', inv, '--no-lock', '--forks', '25', '-o', 'json'], {
            timeRss: true,
            tmpDir: dir,
            env: { KPLAY_RECORD_DIR: path.join(dir, `rec-${rep}-${i}`), JOB_COMPLETION_INDEX: String(i), KPLAY_SHARDS: String(nShards), KPLAY_FLEET_RUN: `b13-${rep}`, KPLAY_FLEET_NAMESPACE: fleetNs, KPLAY_FLEET_CONTEXT: 'sandbox-1', KPLAY_FLEET_KUBECONFIG: env.kubeconfig },
          }),
        ),
      );
      shards.forEach((r, i) => check(r, `kplay B13 shard ${i}`));
      samples.k.push(performance.now() - t0);
      samples.kRss.push(...shards.map((r) => r.rssKiB));
    }
  } finally {
    await env.kubectl(['delete', 'namespace', fleetNs, '--wait=false', '--ignore-not-found']);
  }
  const k = med(samples.k);
  const p = med(samples.p);
  const shardRss = samples.kRss.filter((x) => x);
  const maxShard = shardRss.length ? Math.max(...shardRss) / 1024 : null;
  const medShard = med(shardRss);
  const oneRss = Math.max(...samples.pRss.filter((x) => x)) / 1024;
  return [
    {
      bench: `B13 fleet simulation: ${nEntries} inventory entries, ${nShards} shards vs 1 process`,
      kplay_ms: k,
      peer_ms: p,
      ratio: ratioOf(k, p),
      goal: 'informational (shards buy independence from one machine, not speed on 2 cores)',
      met: null,
      kplay_requests: null,
      kplay_writes: null,
      peer_requests: null,
      peer_writes: null,
      notes: `peak RSS per shard: median ${medShard === null ? '?' : (medShard / 1024).toFixed(0)} MiB, max ${maxShard === null ? '?' : maxShard.toFixed(0)} MiB; 1 process: ${oneRss.toFixed(0)} MiB; all ${nShards} shards on this machine's cores (in a cluster each pod has its own)`,
      samples,
    },
  ];
}

export const BENCHES = [
  { id: 'B1', title: 'k8s_apply of a 300-object set, cold and no-op, vs kubectl apply --server-side', run: b1, rows: (q) => [`B1 apply ${q ? 30 : 300} objects, cold`, `B1 apply ${q ? 30 : 300} objects, no-op`] },
  { id: 'B2', title: 'per-task overhead vs ansible-playbook + kubernetes.core.k8s', run: b2, rows: (q) => [q ? 'B2 5 tasks x 3 clusters' : 'B2 50 tasks x 10 clusters'] },
  { id: 'B3', title: 'fan-out over many inventory clusters vs xargs -P kubectl', run: b3, rows: (q) => [10, 25, 50].map((f) => `B3 ${q ? 10 : 100} clusters x ${q ? 10 : 100} objects, forks ${f}`) },
  { id: 'B4', title: 'helm_release install and no-op vs helm upgrade --install', run: b4, rows: (q) => [`B4 helm_release ${q ? 2 : 10} releases, install`, `B4 helm_release ${q ? 2 : 10} releases, no-op`] },
  { id: 'B4B', title: 'helm_release of an ingress controller chart (hooks, webhook, IngressClass) install and no-op vs helm upgrade --install --wait', run: b4b, rows: () => ['B4b helm_release ingress controller chart (hooks, webhook), install', 'B4b helm_release ingress controller chart (hooks, webhook), no-op'] },
  { id: 'B5', title: 'wait_for latency vs kubectl rollout status', run: b5, rows: (q) => [`B5 wait_for ${q ? 3 : 20} rollouts (latency after last ready)`] },
  { id: 'B6', title: 'lb_switch vs community.general.haproxy', run: b6, rows: (q) => [`B6 lb_switch drain+ready ${q ? 10 : 50} HAProxy servers`] },
  { id: 'B7', title: 'start-up: kplay --help, validate of 200 tasks, run of 1 local task vs node -e 0', run: b7, rows: () => ['B7 kplay --help vs node -e 0', 'B7 kplay validate of 200 tasks vs kplay --help', 'B7 kplay validate of a 200-task role tree vs kplay --help', 'B7 kplay run of 1 local task vs node -e 0'] },
  { id: 'B9', title: 'the expression language: 100,000 conditions and templates vs ansible-core\'s templar', run: b9, rows: (q) => [`B9 ${q ? 2002 : 100002} expressions`] },
  { id: 'B8', title: 'a big vendor-style set (large CRDs, CRs, RBAC, workloads, unserved APIService), cold and no-op, vs kubectl', run: b8, rows: (q) => [`B8 big set ${q ? 22 : 130} objects (${q ? 2 : 10} large CRDs), cold`, `B8 big set ${q ? 22 : 130} objects (${q ? 2 : 10} large CRDs), no-op`] },
  { id: 'B8B', title: 'the shapes of public vendor sets (very large and many small CRDs, 100 large custom resources, aggregated RBAC, webhooks), cold and no-op, vs kubectl', run: b8b, rows: (q) => [`B8b vendor shapes ${q ? 34 : 191} objects (${q ? 5 : 30} CRDs), cold`, `B8b vendor shapes ${q ? 34 : 191} objects (${q ? 5 : 30} CRDs), no-op`] },
  { id: 'B10', title: 'an Ansible kubernetes.core playbook, unchanged, vs ansible-playbook', run: b10, rows: (q) => [`B10 kubernetes.core playbook x ${q ? 3 : 10} clusters`] },
  { id: 'B11', title: 'the live board (--progress board vs plain) over a window of many clusters, in a pty', run: b11, rows: (q) => [`B11 live board, window of ${q ? 20 : 100} clusters (board vs plain, in a pty)`] },
  { id: 'B12', title: 'analysis gate stop latency: first bad scrape to the gate failing, vs the bound interval + scrape interval', run: b12, rows: () => ['B12 gate stop latency (first bad scrape to gate failed)'] },
  { id: 'B13', title: 'fleet simulation: a window over many inventory entries as 10 shards (one fleet run) vs 1 process', run: b13, rows: (q) => [`B13 fleet simulation: ${q ? 60 : 1000} inventory entries, 10 shards vs 1 process`] },
  { id: 'B14', title: B14_TITLE, run: b14, rows: b14Rows },
];
