// The kubernetes.core modules under real ansible-playbook (kubernetes.core from the venv
// test/bench/install.sh makes; connection local, K8S_AUTH_KUBECONFIG/K8S_AUTH_CONTEXT pointing at
// sandbox-1, or KCORE_PARITY_CLUSTER) and under kplay (the built CLI, that cluster) on the same playbooks
// (test/fixtures/kcore): the same ok/changed/failed per task, and the same messages of the `show`
// and `detail` tasks, which print the registered fields, and the same objects in the cluster after the run
// (kind, name and the fields that matter, in the engine's namespace and the cluster-scoped objects named
// after it). Each engine works in a namespace of its own.
//
// A fixture may say, in comment lines:
//   # kcore-parity-args: --check --diff       command-line flags given to both engines
//   # kcore-parity-honest: task name | task name
//       tasks where kubernetes.core reports `changed` although nothing changed, and kplay (honest) `ok`:
//       exactly those statuses must differ that way (README, intentional differences).
//   # kcore-parity-differs: ANSIBLE TEXT => KPLAY TEXT
//       a message kplay prints otherwise, by a README difference: the reference's message must hold
//       ANSIBLE TEXT, which is replaced by KPLAY TEXT before comparing.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE = path.join(VENV, 'bin/ansible-playbook');
const FIXTURES = path.join(repoRoot, 'test/fixtures/kcore');
/** The sandbox cluster both engines work on (KCORE_PARITY_CLUSTER=sandbox-3: a developer on another cluster runs the suite there). */
const CLUSTER_NAME = process.env.KCORE_PARITY_CLUSTER ?? 'sandbox-1';
/** The engines' namespaces start with this (KCORE_PARITY_NS_PREFIX: a developer given a prefix of the shared cluster). */
const NS_PREFIX = process.env.KCORE_PARITY_NS_PREFIX ?? 'k8smods-par';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kcore-parity-'));
// the playbooks are the *.yml files; what they read (templates/, files/) is copied next to them
for (const dir of ['templates', 'files', 'tasks']) if (existsSync(path.join(FIXTURES, dir))) cpSync(path.join(FIXTURES, dir), path.join(tmp, dir), { recursive: true });
let env: SandboxEnv;
const namespaces: string[] = [];

/** What is compared: each task's status, and what the `show`/`detail` tasks printed. */
interface Outcome {
  statuses: [string, string][];
  messages: string[];
  /** The objects the run left behind, normalised (ns replaced by NS). */
  state?: unknown[];
}

/** The comment directives of a fixture. */
function directives(fixture: string): { args: string[]; honest: Set<string>; differs: [string, string][] } {
  const text = readFileSync(path.join(FIXTURES, fixture), 'utf8');
  const args = /^# kcore-parity-args:(.*)$/m.exec(text)?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
  const honest = new Set<string>();
  for (const m of text.matchAll(/^# kcore-parity-honest:(.*)$/gm)) for (const t of (m[1] ?? '').split('|')) if (t.trim()) honest.add(t.trim());
  const differs: [string, string][] = [];
  for (const m of text.matchAll(/^# kcore-parity-differs: (.+) => (.+)$/gm)) differs.push([m[1] ?? '', m[2] ?? '']);
  return { args, honest, differs };
}

// namespaced kinds whose objects are compared after the run (pods and replica sets are named by controllers)
const NAMESPACED = 'configmaps,secrets,services,serviceaccounts,deployments.apps,statefulsets.apps,daemonsets.apps,jobs.batch,cronjobs.batch,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,persistentvolumeclaims,resourcequotas,limitranges,networkpolicies.networking.k8s.io,poddisruptionbudgets.policy,ingresses.networking.k8s.io';
const CLUSTER = 'namespaces,nodes,clusterroles.rbac.authorization.k8s.io,clusterrolebindings.rbac.authorization.k8s.io,customresourcedefinitions.apiextensions.k8s.io,priorityclasses.scheduling.k8s.io';
/** cluster-scoped objects the fixtures made (named after their namespace), deleted after the suite */
const clusterScoped: string[] = [];

type Obj = { kind: string; metadata: { name: string; generateName?: string; labels?: Record<string, string>; annotations?: Record<string, string> } } & Record<string, unknown>;
const DROP_ANNOTATIONS = /^(kubectl\.kubernetes\.io\/last-applied-configuration|deployment\.kubernetes\.io\/revision|node\.alpha\.kubernetes\.io\/ttl|kwok\.x-k8s\.io\/node)$/;
const DROP_SPEC: Record<string, string[]> = {
  Service: ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'internalTrafficPolicy', 'sessionAffinity'],
  Job: ['selector', 'template'],
  Node: ['podCIDR', 'podCIDRs', 'providerID'],
};

function normalise(o: Obj): Record<string, unknown> {
  const { kind, metadata } = o;
  const annotations = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([k]) => !DROP_ANNOTATIONS.test(k)));
  // the Job controller labels its Jobs with their uid
  const labels = Object.fromEntries(Object.entries(metadata.labels ?? {}).filter(([k]) => !/^(batch\.kubernetes\.io\/)?controller-uid$/.test(k)));
  const out: Record<string, unknown> = { kind, name: metadata.generateName ? `${metadata.generateName}*` : metadata.name, labels, annotations };
  for (const key of ['data', 'binaryData', 'type', 'rules', 'subjects', 'roleRef', 'value', 'immutable']) if (o[key] !== undefined) out[key] = o[key];
  const spec = o.spec;
  if (spec && typeof spec === 'object' && kind !== 'Namespace') {
    const s = { ...(spec as Record<string, unknown>) };
    for (const k of DROP_SPEC[kind] ?? []) delete s[k];
    if (kind === 'Node' && Array.isArray(s.taints)) s.taints = (s.taints as Record<string, unknown>[]).map(({ timeAdded: _t, ...t }) => t);
    out.spec = s;
  }
  // a custom resource: everything but the metadata and status
  if (!['ConfigMap', 'Secret', 'Service', 'ServiceAccount', 'Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Node', 'Namespace', 'CustomResourceDefinition', 'PersistentVolumeClaim', 'ResourceQuota', 'LimitRange', 'NetworkPolicy', 'PodDisruptionBudget', 'Ingress', 'PriorityClass'].includes(kind)) {
    for (const [k, v] of Object.entries(o)) if (!['apiVersion', 'kind', 'metadata', 'status'].includes(k)) out[k] = v;
  }
  return out;
}

async function getItems(args: string[]): Promise<Obj[]> {
  const r = await kubectl(['get', ...args, '-o', 'json', '--ignore-not-found'], { check: false, context: CLUSTER_NAME });
  if (r.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim() ? (JSON.parse(r.stdout) as { items: Obj[] }).items : [];
}

/** The objects in the engine's namespace and the cluster-scoped ones named after it, normalised. */
async function clusterState(ns: string): Promise<unknown[]> {
  const cluster = (await getItems([CLUSTER])).filter((o) => o.metadata.name.includes(ns));
  for (const o of cluster) if (o.kind !== 'Namespace') clusterScoped.push(`${o.kind === 'CustomResourceDefinition' ? 'customresourcedefinitions.apiextensions.k8s.io' : o.kind.toLowerCase()}/${o.metadata.name}`);
  const crds = cluster.filter((o) => o.kind === 'CustomResourceDefinition' && !(o.metadata as { deletionTimestamp?: string }).deletionTimestamp) as unknown as { spec: { group: string; names: { plural: string }; scope: string } }[];
  // an object being deleted counts as gone; a namespace being deleted, as gone with all it holds (how far
  // the namespace controller got is a race)
  const live = (o: Obj): boolean => !(o.metadata as { deletionTimestamp?: string }).deletionTimestamp;
  const nsLive = cluster.some((o) => o.kind === 'Namespace' && o.metadata.name === ns && live(o));
  const items = [...cluster, ...(nsLive ? await getItems([NAMESPACED, '-n', ns]) : [])];
  for (const crd of crds) if (nsLive || crd.spec.scope !== 'Namespaced') items.push(...(await getItems([`${crd.spec.names.plural}.${crd.spec.group}`, ...(crd.spec.scope === 'Namespaced' ? ['-n', ns] : [])])));
  return items
    .filter((o) => live(o) && o.metadata.name !== 'kube-root-ca.crt')
    .map((o) => JSON.parse(JSON.stringify(normalise(o)).replaceAll(ns, 'NS')) as Record<string, unknown>)
    .map((o) => ({ o, key: `${String(o.kind)}/${String(o.name)}/${JSON.stringify(o)}` }))
    // generated names are all `prefix-*`: the content orders those
    .sort((a, b) => a.key.localeCompare(b.key))
    .map(({ o }) => o);
}

const PRINTING = /^(show|detail)$/;

/** The fixture for one engine: its hosts, its namespace (normalised back to NS in messages). */
function prepare(fixture: string, engine: 'ansible' | 'kplay'): { file: string; ns: string } {
  const ns = `${NS_PREFIX}-${engine.slice(0, 3)}-${randomBytes(3).toString('hex')}`;
  namespaces.push(ns);
  const text = readFileSync(path.join(FIXTURES, fixture), 'utf8').replaceAll('@HOSTS@', engine === 'ansible' ? 'localhost' : CLUSTER_NAME).replaceAll('@NS@', ns).replaceAll('@KUBECONFIG@', env.kubeconfig);
  // the same text for both engines: kplay resolves kubernetes.core.X itself
  const file = path.join(tmp, `${engine}-${fixture}`);
  writeFileSync(file, text);
  return { file, ns };
}

function runAnsible(fixture: string, args: string[]): Promise<Outcome> {
  const { file, ns } = prepare(fixture, 'ansible');
  const vars = { ansible_python_interpreter: path.join(VENV, 'bin/python') };
  return new Promise((resolve, reject) => {
    execFile(
      ANSIBLE,
      ['-i', 'localhost,', '-c', 'local', '-e', JSON.stringify(vars), ...args, file],
      {
        env: { ...process.env, K8S_AUTH_KUBECONFIG: env.kubeconfig, K8S_AUTH_CONTEXT: CLUSTER_NAME, ANSIBLE_STDOUT_CALLBACK: 'json', ANSIBLE_GATHERING: 'explicit', ANSIBLE_NOCOLOR: '1', ANSIBLE_LOCALHOST_WARNING: 'False' },
        maxBuffer: 64 << 20,
        timeout: 400_000,
      },
      (err, stdout) => {
        let doc: { plays: { tasks: { task: { name: string }; hosts: Record<string, { changed?: boolean; failed?: boolean; skipped?: boolean; msg?: unknown; results?: { msg?: unknown }[] }> }[] }[] };
        try {
          doc = JSON.parse(stdout.slice(stdout.indexOf('{'))) as typeof doc;
        } catch (e) {
          reject(new Error(`ansible-playbook printed no JSON (${err?.message ?? ''}): ${stdout.slice(0, 500)} ${String(e)}`));
          return;
        }
        const out: Outcome = { statuses: [], messages: [] };
        for (const play of doc.plays) {
          for (const t of play.tasks) {
            const r = t.hosts.localhost;
            if (!r) continue;
            if (PRINTING.test(t.task.name)) {
              for (const m of r.results ? r.results.map((x) => x.msg) : [r.msg]) out.messages.push(String(m).replaceAll(ns, 'NS'));
            } else out.statuses.push([t.task.name, r.failed ? 'failed' : r.skipped ? 'skipped' : r.changed ? 'changed' : 'ok']);
          }
        }
        clusterState(ns).then((state) => resolve({ ...out, state }), reject);
      },
    );
  });
}

async function runKplay(fixture: string, args: string[]): Promise<Outcome> {
  const { file, ns } = prepare(fixture, 'kplay');
  const r = await kplay(['run', file, '-i', env.inventory, '-o', 'json', '--no-lock', ...args], { timeoutMs: 200_000 });
  const out: Outcome = { statuses: [], messages: [] };
  for (const e of jsonEvents(r.stdout)) {
    if (e.type !== 'task_result' || typeof e.task !== 'string') continue;
    if (PRINTING.test(e.task)) {
      if (e.item !== undefined || e.task === 'detail') out.messages.push(String(e.msg).replaceAll(ns, 'NS'));
    } else if (e.item === undefined) out.statuses.push([e.task, String(e.status)]);
  }
  return { ...out, state: await clusterState(ns) };
}

/** Ansible names an unnamed task by its action; kplay by its module's short name. */
const unprefixed = (o: Outcome): Outcome => ({ ...o, statuses: o.statuses.map(([t, s]) => [t.replace(/^kubernetes\.core\./, ''), s]) });

/** The fixtures (test/fixtures/kcore/*.yml), sorted: shard K of N runs every Nth from the Kth. */
export function kcoreParityFixtures(): string[] {
  return readdirSync(FIXTURES).filter((f) => f.endsWith('.yml')).sort();
}

/**
 * The suite, for shard `shard` (1-based) of `of`: the test files kcore-parity-K.test.ts each run
 * one shard, so npm test's lanes (test/lanes.mjs) can run them side by side on sandboxes of their own.
 */
export function kcoreParity(shard: number, of: number): void {
  beforeAll(() => {
    env = sandboxEnv();
    expect(existsSync(ANSIBLE), `${ANSIBLE} missing: run bash test/bench/install.sh`).toBe(true);
  });

  afterAll(async () => {
    for (const ns of namespaces) await kubectl(['delete', 'namespace', ns, '--wait=false'], { check: false, context: CLUSTER_NAME });
    for (const name of clusterScoped) await kubectl(['delete', name, '--wait=false', '--ignore-not-found'], { check: false, context: CLUSTER_NAME });
  });

  describe(`kubernetes.core modules: kplay and ansible-playbook agree (fixtures ${shard} of every ${of})`, () => {
    for (const fixture of kcoreParityFixtures().filter((_f, i) => i % of === shard - 1)) {
      it(`${fixture}: same status per task and same registered fields`, async () => {
        const { args, honest, differs } = directives(fixture);
        const [ansible, ours] = await Promise.all([runAnsible(fixture, args), runKplay(fixture, args)]);
        // KCORE_PARITY_DUMP=dir: both outcomes written there, to read what was compared
        if (process.env.KCORE_PARITY_DUMP) writeFileSync(path.join(process.env.KCORE_PARITY_DUMP, `${fixture}.json`), JSON.stringify({ ansible, kplay: ours }, null, 1));
        expect(ansible.statuses.length).toBeGreaterThan(5);
        // the declared honest-changed tasks: kubernetes.core says changed, kplay ok; exactly there
        const declared = [...honest].sort();
        const found = ansible.statuses.filter(([t, st], i) => honest.has(t) && st === 'changed' && ours.statuses[i]?.[0] === t && ours.statuses[i]?.[1] === 'ok').map(([t]) => t);
        expect([...new Set(found)].sort(), 'tasks declared kcore-parity-honest').toEqual(declared);
        for (const [from] of differs) expect(ansible.messages.some((m) => m.includes(from)), `kcore-parity-differs: ansible-playbook printed ${from}`).toBe(true);
        const messages = ansible.messages.map((m) => differs.reduce((acc, [from, to]) => acc.replace(from, to), m));
        const reference = { ...ansible, messages, statuses: ansible.statuses.map(([t, st]): [string, string] => [t, honest.has(t) && st === 'changed' ? 'ok' : st]) };
        expect(unprefixed(ours)).toEqual(unprefixed(reference));
      }, 420_000);
    }
  });
}
