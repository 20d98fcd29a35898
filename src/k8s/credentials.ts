/**
 * A connection's credentials from the inventory's kubeconfig and context: certificates, CA,
 * tokens, basic auth, impersonation, exec plugins and the proxy read directly from kplay's parse
 * (kubeconfig.ts); anything else — auth providers, the default kubeconfig, in-cluster — through
 * `@kubernetes/client-node`'s `KubeConfig`, imported only then.
 */
import type { ProxySettings } from './proxy.js';
import { existsSync, readFileSync } from 'node:fs';
import type * as https from 'node:https';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClusterRef } from '../core/module.js';
import type { TransportAuth } from './http.js';
import { parseExecConfig, runExecPlugin, type ExecConfig, type ExecCredential } from './exec-credential.js';
import { contextEntries, kubeconfigDoc } from './kubeconfig.js';
import { resolveContext, type ResolvedContext } from './resolved.js';
import { errorMessage } from '../load/errors.js';
import { isRecord } from '../core/shape.js';

/** What a connection needs from the kubeconfig. */
export interface Credentials {
  server: string;
  skipTLSVerify: boolean;
  tls: https.AgentOptions;
  auth: TransportAuth;
  /** The kubeconfig cluster's `proxy-url` (with kplay's `kplay-proxy-headers`). */
  proxy?: ProxySettings;
  /** The context as resolved now (see resolved.ts): what helm is handed, so it reaches this server with these credentials. */
  resolved: ResolvedContext;
}

/**
 * A connection failure, worded for whichever inventory entry asked (entries can share one
 * connection, see `connect`).
 */
export class ConnectFailure extends Error {
  constructor(readonly describe: (cluster: string) => string) {
    super(describe('(cluster)'));
  }
}

/**
 * The credentials of `cluster`: read directly when the kubeconfig holds only what kplay reads
 * (see {@link fastCredentials}), else through `@kubernetes/client-node`. Throws a
 * {@link ConnectFailure} for a missing kubeconfig, a failed credential plugin, a missing context.
 */
export async function loadCredentials(cluster: ClusterRef): Promise<Credentials> {
  if (cluster.kubeconfig && !existsSync(cluster.kubeconfig)) throw new ConnectFailure((name) => `cluster ${name}: cannot load kubeconfig ${cluster.kubeconfig}: kubeconfig ${cluster.kubeconfig} does not exist`);
  let creds: Credentials | undefined;
  try {
    creds = await fastCredentials(cluster);
  } catch (e) {
    if (e instanceof ConnectFailure) throw e; // a credential plugin that failed or hung: said as it is
    creds = undefined; // e.g. an unreadable certificate file: client-node reports it
  }
  return creds ?? (await clientNodeCredentials(cluster));
}

/**
 * Credentials from a kubeconfig file for the common cases (certificates, CA, bearer token or
 * token file, basic auth, `exec` credential plugins — run bounded, see exec-credential.ts; data
 * inline or in files), without loading `@kubernetes/client-node` (whose import costs most of a
 * second). `undefined` when the context needs more (auth providers, proxies, …): then
 * {@link clientNodeCredentials} handles it.
 */
async function fastCredentials(cluster: ClusterRef): Promise<Credentials | undefined> {
  if (!cluster.kubeconfig) return undefined;
  const doc = kubeconfigDoc(cluster.kubeconfig);
  if (doc === undefined || doc === 'unreadable') return undefined;
  const entries = contextEntries(doc, cluster.context);
  if (!entries) return undefined;
  const { cluster: kcluster, user } = entries;
  if (typeof kcluster.server !== 'string' || !kcluster.server) return undefined;
  const clusterKeys = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions', 'proxy-url', 'kplay-proxy-headers']);
  const userKeys = new Set(['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'token', 'tokenFile', 'username', 'password', 'exec', 'as', 'as-groups', 'extensions']);
  if (Object.keys(kcluster).some((k) => !clusterKeys.has(k)) || Object.keys(user).some((k) => !userKeys.has(k))) return undefined;
  const exec = user.exec === undefined ? undefined : parseExecConfig(user.exec);
  if (user.exec !== undefined && !exec) return undefined;
  const dir = path.dirname(path.resolve(cluster.kubeconfig));
  // the files the context names are read once, here: kplay's client and helm use the same bytes
  const resolved = resolveContext(cluster.context, entries, dir);
  let cred: ExecCredential | undefined;
  const runPlugin = async (): Promise<ExecCredential> => {
    try {
      return await runExecPlugin(exec as ExecConfig, dir);
    } catch (e) {
      throw new ConnectFailure((name) => `cluster ${name} (context "${cluster.context}"): ${errorMessage(e)}`);
    }
  };
  if (exec) cred = await runPlugin();
  const data = (inline: unknown): Buffer | undefined => (typeof inline === 'string' && inline ? Buffer.from(inline, 'base64') : undefined);
  const skipTLSVerify = kcluster['insecure-skip-tls-verify'] === true;
  const proxyHeaders = isRecord(kcluster['kplay-proxy-headers']) ? Object.fromEntries(Object.entries(kcluster['kplay-proxy-headers']).filter((e): e is [string, string] => typeof e[1] === 'string')) : undefined;
  const proxy: ProxySettings | undefined = typeof kcluster['proxy-url'] === 'string' && kcluster['proxy-url'] ? { url: kcluster['proxy-url'], headers: proxyHeaders } : undefined;
  const tls: https.AgentOptions = {
    ca: data(resolved.cluster['certificate-authority-data']),
    cert: cred?.cert ?? data(resolved.user['client-certificate-data']),
    key: cred?.key ?? data(resolved.user['client-key-data']),
    servername: typeof kcluster['tls-server-name'] === 'string' ? kcluster['tls-server-name'] : undefined,
    rejectUnauthorized: !skipTLSVerify,
  };
  const tokenFile = typeof resolved.user.tokenFile === 'string' ? resolved.user.tokenFile : undefined;
  // impersonation (kubeconfig `as`/`as-groups`, kubectl's --as/--as-group)
  const impersonate: Record<string, string | string[]> = {};
  if (typeof user.as === 'string' && user.as) impersonate['Impersonate-User'] = user.as;
  const groups = Array.isArray(user['as-groups']) ? user['as-groups'].filter((g): g is string => typeof g === 'string' && g !== '') : [];
  if (groups.length) impersonate['Impersonate-Group'] = groups;
  const headers = (): Record<string, string | string[]> => {
    const token = typeof user.token === 'string' && user.token ? user.token : tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined;
    if (token) return { ...impersonate, Authorization: `Bearer ${token}` };
    if (typeof user.username === 'string' && typeof user.password === 'string') return { ...impersonate, Authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` };
    return impersonate;
  };
  if (cred?.token) {
    // an exec plugin's token: asked again (bounded) shortly before it expires, and after a 401
    let stale = false;
    return {
      server: kcluster.server,
      skipTLSVerify,
      tls,
      proxy,
      resolved,
      auth: {
        headers: async (): Promise<Record<string, string | string[]>> => {
          if (stale || (cred?.expiresAt !== undefined && Date.now() > cred.expiresAt - 10_000)) {
            stale = false;
            cred = await runPlugin();
          }
          return cred?.token ? { ...impersonate, Authorization: `Bearer ${cred.token}` } : impersonate;
        },
        invalidate: () => {
          stale = true;
        },
      },
    };
  }
  // a token file is re-read (it may be rotated), like client-go does
  let cached = headers();
  return { server: kcluster.server, skipTLSVerify, tls, proxy, resolved, auth: { headers: () => Promise.resolve(tokenFile ? (cached = headers()) : cached), invalidate: () => undefined } };
}

/** Credentials through `@kubernetes/client-node`'s `KubeConfig` (exec plugins, OIDC, default kubeconfig, in-cluster). */
async function clientNodeCredentials(cluster: ClusterRef): Promise<Credentials> {
  const { KubeConfig: KubeConfigClass } = await import('@kubernetes/client-node');
  const kc = new KubeConfigClass();
  try {
    // the file's text read once: kplay's client and helm's kubeconfig come from the same text
    if (cluster.kubeconfig) {
      kc.loadFromString(readFileSync(cluster.kubeconfig, 'utf8'));
      kc.makePathsAbsolute(path.dirname(path.resolve(cluster.kubeconfig)));
    } else kc.loadFromDefault();
  } catch (e) {
    throw new ConnectFailure((name) => `cluster ${name}: cannot load kubeconfig${cluster.kubeconfig ? ` ${cluster.kubeconfig}` : ''}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const contexts = kc.getContexts().map((c) => c.name);
  if (!contexts.includes(cluster.context)) {
    throw new ConnectFailure((name) => `cluster ${name}: no context "${cluster.context}" in kubeconfig ${cluster.kubeconfig ?? '(default)'}; contexts: ${contexts.join(', ') || '(none)'}`);
  }
  kc.setCurrentContext(cluster.context);
  const kcluster = kc.getCurrentCluster();
  if (!kcluster?.server) throw new ConnectFailure((name) => `cluster ${name}: context "${cluster.context}" has no cluster server in the kubeconfig`);
  const base: https.RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(base);
  } catch (e) {
    throw new ConnectFailure((name) => `cluster ${name}: cannot get credentials for context "${cluster.context}": ${e instanceof Error ? e.message : String(e)}`);
  }
  const tls: https.AgentOptions = { ca: base.ca, cert: base.cert, key: base.key, pfx: base.pfx, passphrase: base.passphrase, servername: base.servername };
  tls.rejectUnauthorized = kcluster.skipTLSVerify ? false : true;
  let resolved: ResolvedContext;
  try {
    resolved = clientNodeResolved(kc, cluster.context);
  } catch (e) {
    throw new ConnectFailure((name) => `cluster ${name}: cannot read the credentials of context "${cluster.context}": ${errorMessage(e)}`);
  }
  return { server: kcluster.server, skipTLSVerify: kcluster.skipTLSVerify, tls, resolved, auth: authProvider(kc, base), ...(kcluster.proxyUrl ? { proxy: { url: kcluster.proxyUrl } } : {}) };
}

/**
 * The context as `@kubernetes/client-node` loaded it (its paths already absolute), resolved: what
 * kplay's client authenticates with is what helm is handed. In-cluster, client-node's
 * `tokenFile` auth provider is the service account's token file.
 */
function clientNodeResolved(kc: KubeConfig, context: string): ResolvedContext {
  const doc: unknown = JSON.parse(kc.exportConfig());
  const entries = isRecord(doc) ? contextEntries(doc, context) : undefined;
  if (!entries) throw new Error(`context "${context}" names no cluster or user`);
  const provider = entries.user['auth-provider'];
  if (isRecord(provider) && provider.name === 'tokenFile' && isRecord(provider.config) && typeof provider.config.tokenFile === 'string') {
    const { 'auth-provider': _p, ...rest } = entries.user;
    entries.user = { ...rest, tokenFile: provider.config.tokenFile };
  }
  return resolveContext(context, entries, process.cwd());
}

/** Auth headers from the kubeconfig, refreshed every minute (exec plugins/OIDC tokens expire) and after a 401. */
function authProvider(kc: KubeConfig, initial: https.RequestOptions): TransportAuth {
  const toHeaders = (o: https.RequestOptions): Record<string, string> => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (typeof v === 'string' || typeof v === 'number') h[k] = String(v);
    if (o.auth) h.Authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
    return h;
  };
  let cached: Promise<Record<string, string>> = Promise.resolve(toHeaders(initial));
  let at = Date.now();
  return {
    headers: () => {
      if (Date.now() - at > 60_000) {
        at = Date.now();
        const o: https.RequestOptions = {};
        cached = kc.applyToHTTPSOptions(o).then(() => toHeaders(o));
      }
      return cached;
    },
    invalidate: () => {
      at = 0;
    },
  };
}
