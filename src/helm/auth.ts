/**
 * kubernetes.core's helm connection arguments (`binary_path`, `context`, `kubeconfig`, `host`,
 * `api_key`, `ca_cert`, `validate_certs`, with their `K8S_AUTH_*` environment fallbacks) turned
 * into one kubeconfig + context that both helm and kplay's Kubernetes client use.
 *
 * kubernetes.core hands `host`/`api_key`/`ca_cert`/`validate_certs: false` to helm as
 * `HELM_KUBEAPISERVER`/`HELM_KUBETOKEN`/`HELM_KUBECAFILE`/`HELM_KUBEINSECURE_SKIP_TLS_VERIFY`
 * and writes an inline kubeconfig (a dict) to a temporary file. kplay writes ONE private temporary
 * kubeconfig (mode 0600 in a 0700 directory, removed after the task) with the same overrides:
 * the server of every cluster, the token of the context's user, the CA file, and TLS
 * verification — so the token is never on a command line and the release is read with the same
 * credentials helm uses.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { isMap, type Values } from './values.js';
import { openResolution } from '../k8s/pool.js';
import { resolvedContextName, resolvedKubeconfig } from '../k8s/resolved.js';

/** The connection arguments as the modules declare them (aliases already resolved). */
export interface HelmAuthArgs {
  binary_path?: string;
  context?: string;
  /** A path, or an inline kubeconfig (a map). */
  kubeconfig?: string | Values;
  host?: string;
  api_key?: string;
  ca_cert?: string;
  validate_certs?: boolean;
}

/** Where helm and the client connect. */
export interface HelmConnection {
  /** kubeconfig context (the inventory cluster's when nothing else is given). */
  kubeContext: string;
  /** Absolute kubeconfig path, if any. */
  kubeconfig?: string;
  /** Remove the temporary kubeconfig, if one was written. */
  cleanup: () => Promise<void>;
}

/** The arguments with kubernetes.core's `K8S_AUTH_*` fallbacks filled in where an argument is not given. */
export function withAuthEnv(args: HelmAuthArgs, env: NodeJS.ProcessEnv = process.env): HelmAuthArgs {
  const e = (k: string): string | undefined => (env[k] !== undefined && env[k] !== '' ? env[k] : undefined);
  const verify = e('K8S_AUTH_VERIFY_SSL');
  return {
    ...args,
    context: args.context ?? e('K8S_AUTH_CONTEXT'),
    kubeconfig: args.kubeconfig ?? e('K8S_AUTH_KUBECONFIG'),
    host: args.host ?? e('K8S_AUTH_HOST'),
    api_key: args.api_key ?? e('K8S_AUTH_API_KEY'),
    ca_cert: args.ca_cert ?? e('K8S_AUTH_SSL_CA_CERT'),
    validate_certs: args.validate_certs ?? (verify === undefined ? undefined : !/^(0|false|no|off|n|f)$/i.test(verify.trim())),
  };
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(1)) : p;
}

/** Set `key` of every item's `field` map in a kubeconfig list (`clusters[].cluster`, `users[].user`). */
function setIn(list: unknown, field: string, key: string, value: unknown, only?: string): void {
  if (!Array.isArray(list)) return;
  for (const item of list) {
    if (!isMap(item) || (only !== undefined && item.name !== only)) continue;
    const m = isMap(item[field]) ? item[field] : {};
    m[key] = value;
    item[field] = m;
  }
}

/**
 * The kubeconfig with kubernetes.core's overrides applied (pure): `host` → every cluster's
 * `server`, `ca_cert` → `certificate-authority`, `validate_certs: false` →
 * `insecure-skip-tls-verify`, `api_key` → the token of the user of `context` (or of the current
 * context). With no kubeconfig, one cluster/context/user named `generated-*` as kubernetes.core makes it.
 */
export function overriddenKubeconfig(base: Values | undefined, a: HelmAuthArgs): { config: Values; context: string } {
  const config: Values = base
    ? (JSON.parse(JSON.stringify(base)) as Values)
    : {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'generated-cluster', cluster: {} }],
        users: [{ name: 'generated-user', user: {} }],
        contexts: [{ name: 'generated-context', context: { cluster: 'generated-cluster', user: 'generated-user' } }],
        'current-context': 'generated-context',
      };
  const context = a.context ?? (typeof config['current-context'] === 'string' ? config['current-context'] : '');
  if (a.host) setIn(config.clusters, 'cluster', 'server', a.host);
  if (a.ca_cert) {
    setIn(config.clusters, 'cluster', 'certificate-authority', path.resolve(expandHome(a.ca_cert)));
    // a CA given inline would win over the file
    if (Array.isArray(config.clusters)) for (const c of config.clusters) if (isMap(c) && isMap(c.cluster)) delete c.cluster['certificate-authority-data'];
  }
  if (a.validate_certs === false) setIn(config.clusters, 'cluster', 'insecure-skip-tls-verify', true);
  if (a.api_key) {
    const ctx = Array.isArray(config.contexts) ? config.contexts.filter(isMap).find((c) => c.name === context) : undefined;
    const user = ctx && isMap(ctx.context) && typeof ctx.context.user === 'string' ? ctx.context.user : undefined;
    if (user) setIn(config.users, 'user', 'token', a.api_key, user);
    else setIn(config.users, 'user', 'token', a.api_key);
  }
  return { config, context };
}

/**
 * Resolve the connection: the given kubeconfig/context (else `K8S_AUTH_*`, else the inventory
 * cluster's), and a private temporary kubeconfig when `host`, `api_key`, `ca_cert`,
 * `validate_certs: false` or an inline kubeconfig ask for one.
 * @param fallback the inventory cluster (`ctx.cluster`)
 * @param baseDir relative kubeconfig paths are resolved against it
 */
export async function helmConnection(raw: HelmAuthArgs, fallback: { context: string; kubeconfig?: string }, baseDir: string, env: NodeJS.ProcessEnv = process.env): Promise<HelmConnection> {
  const a = withAuthEnv(raw, env);
  const file = typeof a.kubeconfig === 'string' ? path.resolve(baseDir, expandHome(a.kubeconfig)) : undefined;
  const overrides = a.host !== undefined || a.api_key !== undefined || a.ca_cert !== undefined || a.validate_certs === false || isMap(a.kubeconfig);
  if (!overrides) {
    if (file === undefined && a.context === undefined) return { kubeContext: fallback.context, kubeconfig: fallback.kubeconfig, cleanup: async () => {} };
    const kubeconfig = file ?? fallback.kubeconfig;
    return { kubeContext: a.context ?? (file === undefined ? fallback.context : await currentContext(kubeconfig)), kubeconfig, cleanup: async () => {} };
  }
  let base: Values | undefined;
  let baseContext: string | undefined;
  if (isMap(a.kubeconfig)) base = a.kubeconfig;
  else if (file !== undefined) base = await readKubeconfig(file);
  else if (a.host === undefined && fallback.kubeconfig !== undefined) {
    // the inventory cluster with other settings: its context as the run resolved it, when it is connected
    const resolved = a.context === undefined || a.context === fallback.context ? await openResolution({ name: fallback.context, ...fallback }) : undefined;
    if (resolved) {
      base = resolvedKubeconfig(resolved);
      baseContext = resolvedContextName(resolved);
    } else {
      base = await readKubeconfig(fallback.kubeconfig);
      baseContext = a.context ?? fallback.context;
    }
  }
  const { config, context } = overriddenKubeconfig(base, { ...a, context: baseContext ?? a.context });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kplay-kubeconfig-'));
  const out = path.join(dir, 'kubeconfig');
  await writeFile(out, JSON.stringify(config), { mode: 0o600, flag: 'wx' });
  return { kubeContext: context, kubeconfig: out, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function readKubeconfig(p: string): Promise<Values> {
  let text: string;
  try {
    text = await readFile(p, 'utf8');
  } catch (e) {
    throw new Error(`kubeconfig ${p}: cannot read it: ${e instanceof Error ? e.message : String(e)}`);
  }
  const v: unknown = YAML.parse(text);
  if (!isMap(v)) throw new Error(`kubeconfig ${p}: not a kubeconfig (expected a map)`);
  return v;
}

/** The `current-context` of a kubeconfig file ('' when none). */
async function currentContext(p: string | undefined): Promise<string> {
  if (p === undefined) return '';
  const v = await readKubeconfig(p);
  return typeof v['current-context'] === 'string' ? v['current-context'] : '';
}
