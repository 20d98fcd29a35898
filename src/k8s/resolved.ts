/**
 * A kubeconfig context resolved once, when its connection opens: the cluster and user entries the
 * context names, with every file they point at read into inline data (CA, client certificate and
 * key), the paths a client keeps reading made absolute (a token file, re-read when rotated as
 * client-go does; an exec plugin's command) and only the fields a client acts on. kplay's client
 * connects from it, and helm is handed exactly it (a private kubeconfig, see
 * helm/private-kubeconfig.ts): a kubeconfig rewritten mid-run — a context re-pointed by
 * `kubectl config`, a credentials helper writing the file — changes neither. A credential refresh
 * (exec plugin, token file) renews the credentials only: the server stays the resolved one.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isRecord } from '../core/shape.js';

/** A context as resolved when its connection opened (see the file header). */
export interface ResolvedContext {
  /** The context's name in the kubeconfig (`''` when there was none, e.g. in-cluster). */
  readonly context: string;
  /** The cluster entry: `server`, `certificate-authority-data`, `insecure-skip-tls-verify`, `tls-server-name`, `proxy-url`. */
  readonly cluster: Readonly<Record<string, unknown>>;
  /** The user entry: inline client certificate/key, token or absolute `tokenFile`, basic auth, `exec`, `auth-provider`, impersonation. */
  readonly user: Readonly<Record<string, unknown>>;
  /** The context's default namespace, if it names one. */
  readonly namespace?: string;
}

/** What a kubeconfig context names (its entries as written, relative paths against `dir`). */
export interface ContextInput {
  cluster: Record<string, unknown>;
  user: Record<string, unknown>;
  namespace?: unknown;
}

const CLUSTER_KEYS = ['server', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'proxy-url', 'disable-compression'];
const USER_KEYS = ['client-certificate-data', 'client-key-data', 'token', 'tokenFile', 'username', 'password', 'exec', 'auth-provider', 'as', 'as-uid', 'as-groups', 'as-user-extra'];
/** File references read now into inline (base64) data: [file key, data key]. */
const CLUSTER_FILES = [['certificate-authority', 'certificate-authority-data']] as const;
const USER_FILES = [
  ['client-certificate', 'client-certificate-data'],
  ['client-key', 'client-key-data'],
] as const;

function pick(entry: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (entry[k] !== undefined && entry[k] !== null && entry[k] !== '') out[k] = entry[k];
  return out;
}

/** `file` keys read into their `data` key (inline data, when given, wins as kplay's client reads it). Throws naming the file that cannot be read. */
function inline(entry: Record<string, unknown>, out: Record<string, unknown>, files: readonly (readonly [string, string])[], dir: string): void {
  for (const [fileKey, dataKey] of files) {
    const file = entry[fileKey];
    if (out[dataKey] !== undefined || typeof file !== 'string' || file === '') continue;
    const abs = path.resolve(dir, file);
    try {
      out[dataKey] = readFileSync(abs).toString('base64');
    } catch (e) {
      throw new Error(`cannot read ${fileKey} ${abs}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }
}

/**
 * Resolve context `name`'s entries (relative paths against `dir`, the kubeconfig's directory):
 * files read now, the token file and exec command absolute, unknown fields dropped.
 * @throws Error naming a CA/certificate/key file that cannot be read
 */
export function resolveContext(name: string, input: ContextInput, dir: string): ResolvedContext {
  const cluster = pick(input.cluster, CLUSTER_KEYS);
  inline(input.cluster, cluster, CLUSTER_FILES, dir);
  const user = pick(input.user, USER_KEYS);
  inline(input.user, user, USER_FILES, dir);
  if (typeof user.tokenFile === 'string') user.tokenFile = path.resolve(dir, user.tokenFile);
  if (isRecord(user.exec) && typeof user.exec.command === 'string' && user.exec.command.includes('/')) {
    // client-go runs a command with a slash relative to the kubeconfig's directory
    user.exec = { ...user.exec, command: path.resolve(dir, user.exec.command) };
  }
  const provider = user['auth-provider'];
  if (isRecord(provider) && isRecord(provider.config) && typeof provider.config['idp-certificate-authority'] === 'string') {
    user['auth-provider'] = { ...provider, config: { ...provider.config, 'idp-certificate-authority': path.resolve(dir, provider.config['idp-certificate-authority']) } };
  }
  return { context: name, cluster, user, ...(typeof input.namespace === 'string' && input.namespace !== '' ? { namespace: input.namespace } : {}) };
}

/** The name the resolved context has in its own kubeconfig (its kubeconfig name, else `kplay`). */
export function resolvedContextName(r: ResolvedContext): string {
  return r.context || 'kplay';
}

/** A kubeconfig holding only the resolved context (cluster, user and context all named {@link resolvedContextName}), as current context. */
export function resolvedKubeconfig(r: ResolvedContext): Record<string, unknown> {
  const name = resolvedContextName(r);
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    'current-context': name,
    clusters: [{ name, cluster: { ...r.cluster } }],
    users: [{ name, user: { ...r.user } }],
    contexts: [{ name, context: { cluster: name, user: name, ...(r.namespace !== undefined ? { namespace: r.namespace } : {}) } }],
  };
}
