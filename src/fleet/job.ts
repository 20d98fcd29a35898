/**
 * `kplay fleet job`: from a playbook, an inventory and run flags, the multi-document YAML of the
 * objects that run the window as N shards in a management cluster (see job-objects.ts). The
 * playbook and inventory are loaded and checked first (a Job that would fail on its first line is
 * not generated), and nothing secret is put into the output: kubeconfigs and secret values come
 * from Secrets by reference, and a bundle file holding a secret value or a kubeconfig is refused.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { defaultKubeconfig } from '../inventory/paths.js';
import { matchClusters } from '../inventory/patterns.js';
import type { Inventory } from '../inventory/types.js';
import type { Playbook } from '../playbook/types.js';
import { InputError } from '../load/errors.js';
import { parseYaml } from '../load/yaml.js';
import { SECRET_NAME } from '../core/mask.js';
import { collectBundle, type Bundle } from './job-bundle.js';
import { bundleData } from './job-configmap.js';
import { RUN_ID_MAX } from './job-contract.js';
import { jobObjects, POD_PATHS, type K8sObject, type KubeconfigSecret } from './job-objects.js';

/** Options of {@link fleetJob}. */
export interface FleetJobOptions {
  playbook: string;
  inventory?: string;
  shards: number;
  parallelism?: number;
  retries?: number;
  runId?: string;
  image?: string;
  namespace?: string;
  recordsPvc?: string;
  /** `NAME` or `NAME/KEY` (key default `kubeconfig`). */
  kubeconfigSecrets?: string[];
  envSecrets?: string[];
  deadlineSeconds?: number;
  /** Run flags passed through to every shard. */
  limit?: string;
  extraVars?: string[];
  check?: boolean;
  diff?: boolean;
  tags?: string[];
  skipTags?: string[];
  startAtTask?: string;
  forks?: string;
  verbose?: number;
  lock?: boolean;
  lockTimeout?: string;
  modulePath?: string[];
  /** Time for the default run id (tests). */
  now?: Date;
}

/** The image used when `--image` is not given: built from docs/Dockerfile (kplay publishes none). */
export const DEFAULT_IMAGE = 'kplay:0.1.0';
/** kplay's version (labels). */
export const KPLAY_VERSION = '0.1.0';
/** The default key of a kubeconfig Secret. */
export const DEFAULT_KUBECONFIG_KEY = 'kubeconfig';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function dnsLabel(value: string, what: string, max = 63): string {
  if (!DNS_LABEL.test(value) || value.length > max) throw new InputError(`${what} '${value}' is not a valid name`, undefined, `use lowercase letters, digits and '-', starting and ending with a letter or digit, at most ${max} characters`);
  return value;
}

function positiveInt(v: number | undefined, what: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min) throw new InputError(`${what} must be an integer of at least ${min}, got ${String(v)}`);
  return v;
}

/** A default run id from the time: `fleet-20261127-001122`. */
export function defaultRunId(now: Date): string {
  const iso = now.toISOString();
  return `fleet-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`;
}

function kubeconfigSecret(raw: string): KubeconfigSecret {
  const [name = '', key = DEFAULT_KUBECONFIG_KEY, ...rest] = raw.split('/');
  if (rest.length || key === '' || !/^[-._a-zA-Z0-9]+$/.test(key)) throw new InputError(`--kubeconfig-secret '${raw}': expected NAME or NAME/KEY`, undefined, 'NAME is a Secret in the Job\'s namespace, KEY the key holding the kubeconfig (default kubeconfig)');
  return { name: dnsLabel(name, '--kubeconfig-secret', 253), key };
}

/** The arguments after `kplay run` every shard gets (paths inside the bundle). */
function runArgs(o: FleetJobOptions, bundle: Bundle): string[] {
  const a = [bundle.playbook];
  if (bundle.inventory !== undefined) a.push('-i', bundle.inventory);
  for (const e of bundle.extraVars) a.push('-e', e);
  if (o.limit) a.push('--limit', o.limit);
  if (o.check) a.push('--check');
  if (o.diff) a.push('--diff');
  for (const t of o.tags ?? []) a.push('--tags', t);
  for (const t of o.skipTags ?? []) a.push('--skip-tags', t);
  if (o.startAtTask) a.push('--start-at-task', o.startAtTask);
  if (o.forks) a.push('--forks', o.forks);
  if (o.verbose) a.push(`-${'v'.repeat(o.verbose)}`);
  if (o.lock === false) a.push('--no-lock');
  if (o.lockTimeout) a.push('--lock-timeout', o.lockTimeout);
  return a;
}

/** A module path must be inside the playbook directory (it is bundled with it); its path inside the bundle. */
function modulePaths(o: FleetJobOptions, cwd: string): string[] {
  const root = path.dirname(path.resolve(cwd, o.playbook));
  return (o.modulePath ?? []).map((m) => {
    const rel = path.relative(root, path.resolve(cwd, m));
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new InputError(`--module-path ${m} is outside the playbook's directory ${root}`, undefined, 'put the modules next to the playbook (e.g. a modules/ directory beside it) so they are bundled with it');
    return rel.split(path.sep).join('/') || '.';
  });
}

/** Values that must not end up in the output: declared secrets and values under secret-looking names that are not templates. */
function secretValues(values: readonly unknown[]): string[] {
  return [...new Set(values.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String))].filter((s) => s.length >= 4 && !s.includes('{{') && !s.includes('{%'));
}

function byName(value: unknown, out: unknown[] = [], depth = 0): unknown[] {
  if (depth > 32 || value === null || typeof value !== 'object') return out;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (SECRET_NAME.test(k) && (typeof v === 'string' || typeof v === 'number')) out.push(v);
    else byName(v, out, depth + 1);
  }
  return out;
}

/** A kubeconfig with credentials looks like this (top-level `kind: Config` and `users:`). */
function looksLikeKubeconfig(text: string): boolean {
  return /^kind:\s*["']?Config["']?\s*$/m.test(text) && /^users:/m.test(text);
}

/** The secrets a YAML/JSON file declares itself (any vars file a play may load at run time: `vars_files`, `include_vars`, role vars). */
function fileSecrets(p: string, text: string): string[] {
  if (!/\.(ya?ml|json)$/i.test(p)) return [];
  let parsed: { docs: unknown[]; secrets: string[] };
  try {
    parsed = parseYaml(text, p);
  } catch {
    return []; // not YAML after all (a template): the loaders will say so where it matters
  }
  return secretValues([...parsed.secrets, ...parsed.docs.flatMap((d) => byName(d))]);
}

/** Refuse a bundle or command line that would carry a secret into the output. */
function refuseSecrets(bundle: Bundle, args: string[], secrets: string[]): void {
  for (const f of bundle.files) {
    const text = f.content.toString('utf8');
    if (looksLikeKubeconfig(text)) {
      throw new InputError(`${f.source} looks like a kubeconfig (kind: Config with users): it would be put into a ConfigMap`, undefined, 'keep kubeconfigs out of the playbook directory: put them in a Secret and pass --kubeconfig-secret NAME[/KEY] (mounted in the pod, KUBECONFIG set to it)');
    }
    const hit = [...secrets, ...fileSecrets(f.path, text)].find((s) => text.includes(s));
    if (hit !== undefined) {
      throw new InputError(`${f.source} holds a secret value (a !secret scalar or a var named like a password/token): it would be put into a ConfigMap in clear`, undefined, "keep secret values out of the bundle: put them in a Secret, pass --env-secret NAME and read them with lookup('env', 'KEY')");
    }
  }
  const arg = args.find((a) => secrets.some((s) => a.includes(s)));
  if (arg !== undefined) throw new InputError('an -e value is a secret (its name looks like a password/token): it would be written into the Job in clear', undefined, "put it in a Secret, pass --env-secret NAME and read it with lookup('env', 'KEY')");
}

/** The clusters a run would touch: the plays' hosts, within `--limit` (every cluster when a pattern cannot be resolved here). */
function targets(inv: Inventory, hosts: (string | string[])[], limit: string | undefined): string[] {
  try {
    const inPlays = new Set(hosts.flatMap((h) => matchClusters(inv, h)));
    const limited = limit ? new Set(matchClusters(inv, limit)) : undefined;
    return [...inPlays].filter((c) => !limited || limited.has(c));
  } catch {
    return [...inv.clusters.keys()];
  }
}

/**
 * Every target cluster must connect through a kubeconfig the pod has: the one of `KUBECONFIG`
 * (the first `--kubeconfig-secret`) when the inventory names none, else a file of a mounted Secret.
 */
function checkKubeconfigs(inv: Inventory, clusters: string[], secrets: KubeconfigSecret[], cwd: string): void {
  const fallback = defaultKubeconfig(process.env, cwd);
  for (const name of clusters) {
    const c = inv.clusters.get(name);
    if (!c || c.implicit) continue;
    const k = c.kubeconfig;
    if (k === undefined || k === fallback) {
      if (secrets.length === 0) throw new InputError(`cluster ${name} connects through the default kubeconfig, which a shard pod does not have`, undefined, "put the target clusters' kubeconfig in a Secret (kubectl create secret generic NAME --from-file=kubeconfig=FILE) and pass --kubeconfig-secret NAME: it is mounted and KUBECONFIG points at it");
      continue;
    }
    if (secrets.some((s) => k.startsWith(`${POD_PATHS.kubeconfigs}/${s.name}/`))) continue;
    throw new InputError(
      `cluster ${name} connects through ${k}, a file a shard pod does not have`,
      undefined,
      `put it in a Secret and pass --kubeconfig-secret NAME; in the inventory, leave kubeconfig out (KUBECONFIG then points at the first secret) or name the mounted file: ${POD_PATHS.kubeconfigs}/NAME/KEY`,
    );
  }
}

/**
 * Loads and checks a run's inputs as `kplay run` does: `loadAll` of src/run/inputs.ts, passed in by
 * the caller (the run service sits above the fleet folder).
 */
export type LoadRunInputs = (
  playbook: string,
  flags: { inventory?: string; extraVars?: string[]; modulePath?: string[] },
  requireInventory: boolean,
) => Promise<{ playbook: Playbook; inventory?: Inventory; extraVars: Record<string, unknown> }>;

/** Generate the objects, loading the run's inputs with `load`. Throws InputError on bad input. */
export async function fleetJobObjects(o: FleetJobOptions, load: LoadRunInputs): Promise<K8sObject[]> {
  const cwd = process.cwd(); // relative paths are relative to it, as for kplay run
  const shards = positiveInt(o.shards, '--shards', 1) ?? 1;
  const parallelism = positiveInt(o.parallelism, '--parallelism', 1) ?? shards;
  const retries = positiveInt(o.retries, '--retries', 0) ?? 0;
  if (retries > 0 && !o.recordsPvc) {
    throw new InputError('--retries needs --records-pvc', undefined, "a rerun pod resumes the shard from its journal, which only survives the pod on a volume: pass --records-pvc CLAIM (a ReadWriteMany claim in the Job's namespace), or leave --retries at 0 and resume a failed shard yourself");
  }
  const runId = dnsLabel(o.runId ?? defaultRunId(o.now ?? new Date()), '--fleet-run', RUN_ID_MAX);
  const namespace = dnsLabel(o.namespace ?? 'default', '--namespace');
  const kubeconfigSecrets = (o.kubeconfigSecrets ?? []).map(kubeconfigSecret);
  const envSecrets = (o.envSecrets ?? []).map((n) => dnsLabel(n, '--env-secret', 253));
  if (o.recordsPvc !== undefined) dnsLabel(o.recordsPvc, '--records-pvc', 253);
  const mods = modulePaths(o, cwd);

  // load and check everything a shard loads, as it will (a bad playbook fails here, not in N pods)
  const loaded = await load(path.resolve(cwd, o.playbook), { inventory: o.inventory, extraVars: o.extraVars, modulePath: o.modulePath }, true);
  if (loaded.inventory) checkKubeconfigs(loaded.inventory, targets(loaded.inventory, loaded.playbook.plays.map((p) => p.hosts), o.limit), kubeconfigSecrets, cwd);
  const bundle = await collectBundle({ playbook: o.playbook, inventory: o.inventory, extraVars: o.extraVars, cwd });
  const args = [...runArgs(o, bundle), ...mods.flatMap((m) => ['--module-path', m])];
  refuseSecrets(bundle, args, secretValues([...loaded.playbook.secrets, ...(loaded.inventory?.secrets ?? []), ...byName(loaded.extraVars)]));

  return jobObjects({
    runId,
    namespace,
    image: o.image ?? DEFAULT_IMAGE,
    shards,
    parallelism,
    retries,
    ...(o.recordsPvc ? { recordsPvc: o.recordsPvc } : {}),
    kubeconfigSecrets,
    envSecrets,
    runArgs: args,
    bundle: bundleData(bundle),
    ...(o.deadlineSeconds !== undefined ? { deadlineSeconds: positiveInt(o.deadlineSeconds, '--deadline', 1) } : {}),
    version: KPLAY_VERSION,
  });
}

/** The objects as multi-document YAML, with a header saying how to apply them. */
export function toYaml(objects: K8sObject[]): string {
  const job = objects.find((x) => x.kind === 'Job');
  const ns = typeof job?.metadata.namespace === 'string' ? job.metadata.namespace : 'default';
  const name = typeof job?.metadata.name === 'string' ? job.metadata.name : '';
  const header = [
    '# Generated by kplay fleet job. Apply with server-side apply (a client-side apply copies the',
    "# bundle into an annotation limited to 256 KiB):",
    '#   kubectl apply --server-side -f THIS_FILE',
    `# Watch: kubectl -n ${ns} get job ${name} -w; failed shards: .status.failedIndexes`,
  ].join('\n');
  return `${header}\n${objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n')}`;
}
