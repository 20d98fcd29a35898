/**
 * The connection arguments of kubernetes.core's modules (`k8s_auth_options`: `kubeconfig`,
 * `context`, `host`, `api_key`, …) and where a task's Kubernetes client comes from: the task's
 * arguments first, then the `K8S_AUTH_*` environment variables (as kubernetes.core's
 * module_utils/k8s/client.py reads them), then the task's cluster (`kubeFor(ctx)`).
 *
 * A connection that differs from the task's cluster is described as a kubeconfig (the given one,
 * or one written for it, mode 0600, removed when kplay exits) and opened with `connect`, so it
 * shares the client's transport, caching and credential handling.
 */
import { bypassesProxy, envProxy } from './proxy.js';
import { createHash } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseData } from '../load/fast-yaml.js';
import { isRecord } from '../core/shape.js';
import { errorMessage } from '../load/errors.js';
import { Type, type Args } from '../core/args.js';
import { UnreachableError, type ClusterRef, type ModuleContext } from '../core/module.js';
import { connect, kubeFor } from './client.js';
import { defaultKubeconfig, readKubeconfig } from './kubeconfig.js';
import type { KubeClient } from './types.js';
import { openResolution } from './pool.js';
import { pythonRequires } from './kcore-validate.js';
import type { ResolvedContext } from './resolved.js';

const str = (description: string): ReturnType<typeof Type.String> => Type.String({ description });
const bool = (description: string): ReturnType<typeof Type.Boolean> => Type.Boolean({ description });

/**
 * The properties of kubernetes.core's `k8s_auth_options`, to spread into a module's schema:
 * `Type.Object({ ...own, ...k8sAuthProperties }, { additionalProperties: false })`.
 */
export const k8sAuthProperties = {
  host: Type.Optional(str('URL of the apiserver (`K8S_AUTH_HOST`). With `api_key`, `username`+`password` or `client_cert`+`client_key` no kubeconfig is read; otherwise it overrides the kubeconfig\'s server.')),
  api_key: Type.Optional(str('Bearer token (`K8S_AUTH_API_KEY`). Masked in every output.')),
  kubeconfig: Type.Optional(
    Type.Unsafe<string | Record<string, unknown>>({
      type: ['string', 'object'],
      description:
        'Path of a kubeconfig file (relative paths: found like `src` files; several joined with `:`, merged as kubectl does), or a kubeconfig as a map (`K8S_AUTH_KUBECONFIG`). Default: the task\'s cluster.',
    }),
  ),
  context: Type.Optional(str('Context of the kubeconfig (`K8S_AUTH_CONTEXT`). Without `kubeconfig`: a context of the task cluster\'s kubeconfig (the default kubeconfig when it has none).')),
  username: Type.Optional(str('User for HTTP basic auth (`K8S_AUTH_USERNAME`).')),
  password: Type.Optional(str('Password for HTTP basic auth (`K8S_AUTH_PASSWORD`). Masked in every output.')),
  validate_certs: Type.Optional(bool('Verify the apiserver\'s certificate (`K8S_AUTH_VERIFY_SSL`); `false` is the kubeconfig\'s `insecure-skip-tls-verify: true`.')),
  verify_ssl: Type.Optional(bool('Alias of `validate_certs`.')),
  ca_cert: Type.Optional(str('CA certificate file of the apiserver (`K8S_AUTH_SSL_CA_CERT`).')),
  ssl_ca_cert: Type.Optional(str('Alias of `ca_cert`.')),
  client_cert: Type.Optional(str('Client certificate file (`K8S_AUTH_CERT_FILE`).')),
  cert_file: Type.Optional(str('Alias of `client_cert`.')),
  client_key: Type.Optional(str('Client key file (`K8S_AUTH_KEY_FILE`).')),
  key_file: Type.Optional(str('Alias of `client_key`.')),
  proxy: Type.Optional(str('HTTP(S) proxy URL (`K8S_AUTH_PROXY`): the apiserver is reached through CONNECT tunnels. Unset: `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` of the environment, as the Python kubernetes client.')),
  no_proxy: Type.Optional(str('Comma-separated hosts, domains, `host:port`, IP networks or `*` reached without the proxy (`K8S_AUTH_NO_PROXY`; unset: `NO_PROXY`).')),
  proxy_headers: Type.Optional(
    Type.Object(
      {
        proxy_basic_auth: Type.Optional(str('`user:password` for the proxy.')),
        basic_auth: Type.Optional(str('`user:password` basic auth header.')),
        user_agent: Type.Optional(str('User agent.')),
      },
      { additionalProperties: false, description: 'Headers sent to the proxy with each CONNECT (`K8S_AUTH_PROXY_HEADERS_*`), as urllib3 `make_headers` builds them.' },
    ),
  ),
  persist_config: Type.Optional(bool('Save refreshed tokens into the kubeconfig (`K8S_AUTH_PERSIST_CONFIG`). Accepted and ignored: kplay refreshes tokens in memory and never writes a kubeconfig.')),
  impersonate_user: Type.Optional(str('User to impersonate (`K8S_AUTH_IMPERSONATE_USER`), as `kubectl --as`.')),
  impersonate_groups: Type.Optional(
    Type.Unsafe<string | string[]>({
      type: ['array', 'string'],
      items: { type: 'string' },
      description: 'Groups to impersonate (`K8S_AUTH_IMPERSONATE_GROUPS`, comma-separated), as `kubectl --as-group`.',
    }),
  ),
};

/** {@link k8sAuthProperties} as an object schema. */
export const k8sAuthSchema = Type.Object(k8sAuthProperties);
/** The connection arguments of a task (any module that spreads {@link k8sAuthProperties}). */
export type K8sAuthArgs = Args<typeof k8sAuthSchema>;

/** The connection settings of a task after arguments and environment (kubernetes.core's names). */
export interface K8sAuth {
  kubeconfig?: string | Record<string, unknown>;
  context?: string;
  host?: string;
  apiKey?: string;
  username?: string;
  password?: string;
  validateCerts?: boolean;
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  proxy?: string;
  noProxy?: string;
  proxyHeaders?: Record<string, string>;
  /** `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`/`NO_PROXY` (either case) of the task's environment: used when `proxy` is unset, as the Python client does. */
  proxyEnv?: Record<string, string>;
  persistConfig?: boolean;
  impersonateUser?: string;
  impersonateGroups?: string[];
}

/** Environment variables as a map (`process.env`, or a task's `environment:`). */
export type EnvMap = Readonly<Record<string, string | undefined>>;

/** How kubernetes.core reads a boolean from the environment: anything but 0/false/no is true. */
const envBool = (v: string): boolean => !['0', 'false', 'no'].includes(v.toLowerCase());

/**
 * The connection settings of a task: each setting from its argument (or the argument's alias),
 * else from `K8S_AUTH_<ARG>` or `K8S_AUTH_<CLIENT NAME>` (`K8S_AUTH_VALIDATE_CERTS` or
 * `K8S_AUTH_VERIFY_SSL`, `K8S_AUTH_CA_CERT` or `K8S_AUTH_SSL_CA_CERT`, …; an empty variable
 * counts as unset), exactly as kubernetes.core's `_create_auth_spec`.
 */
export function resolveAuth(args: K8sAuthArgs, env: EnvMap): K8sAuth {
  const fromEnv = (...names: string[]): string | undefined => {
    for (const n of names) {
      const v = env[`K8S_AUTH_${n}`];
      if (v !== undefined && v !== '') return v;
    }
    return undefined;
  };
  const s = (arg: string | undefined, ...names: string[]): string | undefined => arg ?? fromEnv(...names);
  const b = (arg: boolean | undefined, ...names: string[]): boolean | undefined => {
    if (arg !== undefined) return arg;
    const v = fromEnv(...names);
    return v === undefined ? undefined : envBool(v);
  };
  const out: K8sAuth = {
    kubeconfig: args.kubeconfig ?? fromEnv('KUBECONFIG'),
    context: s(args.context, 'CONTEXT'),
    host: s(args.host, 'HOST'),
    apiKey: s(args.api_key, 'API_KEY'),
    username: s(args.username, 'USERNAME'),
    password: s(args.password, 'PASSWORD'),
    validateCerts: b(args.validate_certs ?? args.verify_ssl, 'VALIDATE_CERTS', 'VERIFY_SSL'),
    caCert: s(args.ca_cert ?? args.ssl_ca_cert, 'CA_CERT', 'SSL_CA_CERT'),
    clientCert: s(args.client_cert ?? args.cert_file, 'CLIENT_CERT', 'CERT_FILE'),
    clientKey: s(args.client_key ?? args.key_file, 'CLIENT_KEY', 'KEY_FILE'),
    proxy: s(args.proxy, 'PROXY'),
    noProxy: s(args.no_proxy, 'NO_PROXY'),
    persistConfig: b(args.persist_config, 'PERSIST_CONFIG'),
    impersonateUser: s(args.impersonate_user, 'IMPERSONATE_USER'),
  };
  const headers: Record<string, string> = {};
  for (const k of ['proxy_basic_auth', 'basic_auth', 'user_agent'] as const) {
    const v = args.proxy_headers ? args.proxy_headers[k] : env[`K8S_AUTH_PROXY_HEADERS_${k.toUpperCase()}`];
    if (v !== undefined) headers[k] = v;
  }
  if (Object.keys(headers).length) out.proxyHeaders = headers;
  const proxyEnv: Record<string, string> = {};
  for (const k of ['https_proxy', 'http_proxy', 'all_proxy', 'no_proxy']) {
    const v = env[k] ?? env[k.toUpperCase()];
    if (v !== undefined && v !== '') proxyEnv[k] = v;
  }
  if (Object.keys(proxyEnv).some((k) => k !== 'no_proxy')) out.proxyEnv = proxyEnv;
  const groups = args.impersonate_groups ?? fromEnv('IMPERSONATE_GROUPS');
  if (groups !== undefined) out.impersonateGroups = (typeof groups === 'string' ? groups.split(',') : groups).filter((g) => g !== '');
  for (const k of Object.keys(out) as (keyof K8sAuth)[]) if (out[k] === undefined) delete out[k];
  return out;
}

/** The secrets among the connection settings (api_key, password, credentials of an inline kubeconfig). */
export function authSecrets(auth: K8sAuth): string[] {
  const out: string[] = [];
  if (auth.apiKey) out.push(auth.apiKey);
  if (auth.password) out.push(auth.password);
  if (auth.proxyHeaders?.proxy_basic_auth) out.push(auth.proxyHeaders.proxy_basic_auth);
  if (auth.proxyHeaders?.basic_auth) out.push(auth.proxyHeaders.basic_auth);
  if (isRecord(auth.kubeconfig)) {
    const users = Array.isArray(auth.kubeconfig.users) ? auth.kubeconfig.users : [];
    for (const u of users) {
      const user = isRecord(u) && isRecord(u.user) ? u.user : {};
      for (const k of ['token', 'password', 'client-key-data']) if (typeof user[k] === 'string' && user[k]) out.push(user[k]);
    }
  }
  return out;
}

/** Where a task's client comes from. */
export type ConnectionPlan =
  /** The task's cluster, as every other module reaches it. */
  | { kind: 'task' }
  /** A kubeconfig file and context as they are. */
  | { kind: 'kubeconfig'; kubeconfig: string; context: string }
  /** A kubeconfig built for the settings (one context, `kplay`), to write to a file. */
  | { kind: 'built'; config: Record<string, unknown> };

/** `~` and `~/…` are the user's home, as the Python kubernetes client (and Ansible's path lookups) expand them. */
function expandHome(f: string): string {
  return f === '~' || f.startsWith('~/') ? path.join(os.homedir(), f.slice(1)) : f;
}

/** How relative paths of the settings are found (`ctx.findFile(rel, 'files')`). */
export type FindFile = (rel: string) => string;

/**
 * What a task connects to, as kubernetes.core decides it: `host` with `api_key`,
 * `username`+`password` or `client_cert`+`client_key` needs no kubeconfig; else `kubeconfig`
 * and/or `context` select a kubeconfig context; else the task's cluster. The other settings
 * (`host`, `validate_certs`, `ca_cert`, `impersonate_user`, …) override what that context says.
 * Throws for settings kplay cannot honour (proxies) and for unknown contexts.
 * @param resolved the task cluster's context as the run resolved it (an open connection's): the
 *   base of settings that override the task's cluster, so that a kubeconfig rewritten since is not read
 */
export function planConnection(auth: K8sAuth, cluster: ClusterRef, findFile: FindFile, resolved?: ResolvedContext): ConnectionPlan {
  const set = (...v: (string | undefined)[]): boolean => v.every((x) => x !== undefined && x !== '');
  const standalone = auth.host !== undefined && (set(auth.apiKey) || set(auth.username, auth.password) || set(auth.clientCert, auth.clientKey));
  const overrides = auth.host !== undefined || auth.apiKey !== undefined || auth.username !== undefined || auth.password !== undefined || auth.validateCerts !== undefined || auth.caCert !== undefined || auth.clientCert !== undefined || auth.clientKey !== undefined || auth.impersonateUser !== undefined || auth.impersonateGroups !== undefined || auth.proxy !== undefined || auth.proxyEnv !== undefined;
  if (standalone) return { kind: 'built', config: withOverrides({ cluster: {}, user: {} }, auth) };
  if (auth.kubeconfig === undefined && auth.context === undefined && !overrides) return { kind: 'task' };
  if (resolved && overrides && auth.kubeconfig === undefined && (auth.context === undefined || auth.context === cluster.context)) {
    // the task's cluster with other settings: from its context as the run resolved it, not as the file says now
    return { kind: 'built', config: withOverrides({ cluster: { ...resolved.cluster }, user: { ...resolved.user }, namespace: resolved.namespace }, auth) };
  }

  let doc: Record<string, unknown>;
  let file: string | undefined;
  if (isRecord(auth.kubeconfig)) doc = auth.kubeconfig;
  else {
    const files = auth.kubeconfig !== undefined ? auth.kubeconfig.split(path.delimiter).filter((f) => f !== '').map((f) => findFile(expandHome(f))) : [cluster.kubeconfig ?? defaultKubeconfig() ?? ''];
    if (files.length === 0 || files[0] === '') throw new Error('no kubeconfig: give kubeconfig (or K8S_AUTH_KUBECONFIG), or run the task on a cluster of the inventory');
    if (files.length === 1 && !overrides) {
      const f = files[0] ?? '';
      const context = auth.context ?? (auth.kubeconfig === undefined ? cluster.context : currentContextOf(f));
      return { kind: 'kubeconfig', kubeconfig: f, context };
    }
    doc = mergeKubeconfigs(files);
    file = files[0];
  }
  const contextName = auth.context ?? (auth.kubeconfig === undefined ? cluster.context : typeof doc['current-context'] === 'string' ? doc['current-context'] : undefined);
  if (!contextName) throw new Error('the kubeconfig has no current-context: give context (or K8S_AUTH_CONTEXT)');
  const named = (list: unknown, name: unknown): Record<string, unknown> | undefined => (Array.isArray(list) ? (list as unknown[]).find((x): x is Record<string, unknown> => isRecord(x) && x.name === name) : undefined);
  const ctxEntry = named(doc.contexts, contextName);
  const ctxBody = ctxEntry && isRecord(ctxEntry.context) ? ctxEntry.context : undefined;
  if (!ctxBody) throw new Error(`no context "${contextName}" in the kubeconfig${file ? ` ${file}` : ''}`);
  const clusterEntry = named(doc.clusters, ctxBody.cluster);
  const userEntry = named(doc.users, ctxBody.user);
  const dir = file ? path.dirname(path.resolve(file)) : process.cwd();
  const base = {
    cluster: absolutePaths(clusterEntry && isRecord(clusterEntry.cluster) ? clusterEntry.cluster : {}, dir, ['certificate-authority']),
    user: absolutePaths(userEntry && isRecord(userEntry.user) ? userEntry.user : {}, dir, ['client-certificate', 'client-key', 'tokenFile']),
    namespace: ctxBody.namespace,
  };
  return { kind: 'built', config: withOverrides(base, auth) };
}

function currentContextOf(file: string): string {
  const kc = readKubeconfig(file);
  if (kc === undefined) throw new Error(`kubeconfig ${file} does not exist`);
  if (kc === 'unreadable') throw new Error(`kubeconfig ${file} cannot be parsed`);
  if (!kc.currentContext) throw new Error(`kubeconfig ${file} has no current-context: give context (or K8S_AUTH_CONTEXT)`);
  return kc.currentContext;
}

/** Several kubeconfig files as one, the first definition of a name winning (kubectl's rule). */
function mergeKubeconfigs(files: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { clusters: [], contexts: [], users: [] };
  for (const f of files) {
    let doc: unknown;
    try {
      doc = parseData(readFileSync(f, 'utf8'));
    } catch (e) {
      throw new Error(`cannot read kubeconfig ${f}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    if (!isRecord(doc)) throw new Error(`kubeconfig ${f} is not a map`);
    const dir = path.dirname(path.resolve(f));
    if (out['current-context'] === undefined && typeof doc['current-context'] === 'string') out['current-context'] = doc['current-context'];
    for (const [key, field, paths] of [
      ['clusters', 'cluster', ['certificate-authority']],
      ['users', 'user', ['client-certificate', 'client-key', 'tokenFile']],
      ['contexts', 'context', []],
    ] as const) {
      const have = out[key] as Record<string, unknown>[];
      for (const e of Array.isArray(doc[key]) ? (doc[key] as unknown[]) : []) {
        if (!isRecord(e) || have.some((x) => x.name === e.name)) continue;
        have.push({ ...e, [field]: isRecord(e[field]) ? absolutePaths(e[field], dir, paths) : e[field] });
      }
    }
  }
  return out;
}

function absolutePaths(entry: Record<string, unknown>, dir: string, keys: readonly string[]): Record<string, unknown> {
  const out = { ...entry };
  for (const k of keys) if (typeof out[k] === 'string' && out[k] !== '') out[k] = path.resolve(dir, out[k]);
  return out;
}

/** A one-context kubeconfig (`kplay`) from a cluster and user entry, with the settings applied. */
function withOverrides(base: { cluster: Record<string, unknown>; user: Record<string, unknown>; namespace?: unknown }, auth: K8sAuth): Record<string, unknown> {
  const cluster = { ...base.cluster };
  const user = { ...base.user };
  if (auth.host !== undefined) cluster.server = auth.host.replace(/\/+$/, '');
  if (auth.caCert !== undefined) {
    cluster['certificate-authority'] = path.resolve(auth.caCert);
    delete cluster['certificate-authority-data'];
  }
  if (auth.validateCerts !== undefined) cluster['insecure-skip-tls-verify'] = !auth.validateCerts;
  if (cluster['insecure-skip-tls-verify'] === true) {
    // client-go refuses a CA together with insecure-skip-tls-verify
    delete cluster['certificate-authority'];
    delete cluster['certificate-authority-data'];
  }
  const credentials = auth.apiKey !== undefined || auth.username !== undefined || auth.clientCert !== undefined;
  if (credentials) for (const k of ['token', 'tokenFile', 'username', 'password', 'exec', 'auth-provider']) delete user[k];
  if (auth.apiKey !== undefined) user.token = auth.apiKey;
  if (auth.username !== undefined) user.username = auth.username;
  if (auth.password !== undefined) user.password = auth.password;
  if (auth.clientCert !== undefined) {
    user['client-certificate'] = path.resolve(auth.clientCert);
    delete user['client-certificate-data'];
  }
  if (auth.clientKey !== undefined) {
    user['client-key'] = path.resolve(auth.clientKey);
    delete user['client-key-data'];
  }
  const server = typeof cluster.server === 'string' ? cluster.server : '';
  const fromEnv = auth.proxy === undefined && auth.proxyEnv ? envProxy(server, auth.proxyEnv) : {};
  const proxy = auth.proxy ?? fromEnv.proxy;
  if (proxy !== undefined && !bypassesProxy(server, auth.noProxy ?? fromEnv.noProxy)) {
    cluster['proxy-url'] = proxy;
    // urllib3's make_headers, sent with each CONNECT
    const h = auth.proxyHeaders ?? {};
    const headers: Record<string, string> = {};
    if (h.proxy_basic_auth !== undefined) headers['proxy-authorization'] = `Basic ${Buffer.from(h.proxy_basic_auth).toString('base64')}`;
    if (h.basic_auth !== undefined) headers.authorization = `Basic ${Buffer.from(h.basic_auth).toString('base64')}`;
    if (h.user_agent !== undefined) headers['user-agent'] = h.user_agent;
    if (Object.keys(headers).length) cluster['kplay-proxy-headers'] = headers;
  }
  if (auth.impersonateUser !== undefined) user.as = auth.impersonateUser;
  if (auth.impersonateGroups !== undefined) user['as-groups'] = auth.impersonateGroups;
  const context: Record<string, unknown> = { cluster: 'kplay', user: 'kplay' };
  if (typeof base.namespace === 'string') context.namespace = base.namespace;
  return { apiVersion: 'v1', kind: 'Config', 'current-context': 'kplay', clusters: [{ name: 'kplay', cluster }], users: [{ name: 'kplay', user }], contexts: [{ name: 'kplay', context }] };
}

const written = new Set<string>();

/** Write a built kubeconfig (mode 0600, named by its content so equal settings share a connection); removed at exit. */
function writeKubeconfig(config: Record<string, unknown>): string {
  const text = JSON.stringify(config);
  const file = path.join(os.tmpdir(), `kplay-k8s-auth-${process.pid}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`);
  if (!written.has(file)) {
    writeFileSync(file, text, { mode: 0o600 });
    if (written.size === 0) {
      process.on('exit', () => {
        for (const f of written) {
          try {
            unlinkSync(f);
          } catch {
            // already gone
          }
        }
      });
    }
    written.add(file);
  }
  return file;
}

/**
 * The Kubernetes client of a task with kubernetes.core connection arguments: the arguments, then
 * `env` (`K8S_AUTH_*`), then the task's cluster (see {@link planConnection}). Secrets among
 * them are masked. A connection of the task's own cluster that fails throws (the cluster is
 * unreachable); one the arguments describe fails the task (`Error`).
 * @example const client = await kubeClientFor(ctx, args, process.env);
 */
export async function kubeClientFor(ctx: ModuleContext, args: K8sAuthArgs, env: EnvMap): Promise<KubeClient> {
  const auth = resolveAuth(args, env);
  for (const s of authSecrets(auth)) ctx.addSecret(s);
  const plan = planConnection(auth, ctx.cluster, (rel) => ctx.findFile(rel, 'files'), await openResolution(ctx.cluster));
  if (plan.kind === 'task') return kubeFor(ctx);
  const ref: ClusterRef = plan.kind === 'kubeconfig' ? { name: plan.context, context: plan.context, kubeconfig: plan.kubeconfig } : { name: auth.context ?? auth.host ?? ctx.cluster.name, context: 'kplay', kubeconfig: writeKubeconfig(plan.config) };
  if (plan.kind === 'kubeconfig' && path.resolve(plan.kubeconfig) === (ctx.cluster.kubeconfig && path.resolve(ctx.cluster.kubeconfig)) && plan.context === ctx.cluster.context) return kubeFor(ctx);
  try {
    return await ctx.adapter<KubeClient>(`k8s:${ref.kubeconfig ?? ''}:${ref.context}`, () => connect(ref, { signal: ctx.signal }));
  } catch (e) {
    if (e instanceof UnreachableError) throw new Error(ctx.mask(e.message), { cause: e });
    throw e;
  }
}

/**
 * The client a kubernetes.core task talks to ({@link kubeClientFor} with the task's environment
 * over kplay's), or the task's failure as kubernetes.core words it when its own connection
 * settings cannot make one. An unreachable *inventory* cluster is thrown on (the executor marks
 * the cluster unreachable).
 */
export async function taskClient(ctx: ModuleContext, args: K8sAuthArgs): Promise<{ client: KubeClient } | { failed: { status: 'failed'; msg: string } }> {
  // an in-memory kubeconfig needs kubernetes>=17.17.0 where kubernetes.core runs: checked on the task's own
  // `ansible_python_interpreter` when it names one (kplay itself needs no Python)
  const python = ctx.vars.ansible_python_interpreter;
  if (isRecord(args.kubeconfig) && typeof python === 'string' && python.trim() && !python.startsWith('auto')) {
    const problem = await pythonRequires(python.trim(), 'kubernetes', '17.17.0', 'to use in-memory config', ctx.signal);
    if (problem) return { failed: { status: 'failed' as const, msg: ctx.mask(problem) } };
  }
  try {
    return { client: await kubeClientFor(ctx, args, { ...process.env, ...ctx.environment }) };
  } catch (e) {
    if (e instanceof Error && e.name === 'UnreachableError') throw e;
    return { failed: { status: 'failed' as const, msg: ctx.mask(`Could not create API client: ${errorMessage(e)}`) } };
  }
}
