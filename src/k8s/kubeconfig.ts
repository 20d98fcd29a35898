/**
 * kplay's one kubeconfig parser: a kubeconfig file read and parsed (each text parsed once), the
 * entries a context names, and what kplay decides before connecting — whether a context exists
 * (no context → no cluster to lock) and who the current user is (who approves a plan). The
 * connection's credentials are read from the same parse (credentials.ts).
 */
import { setting } from '../core/settings.js';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseData } from '../load/fast-yaml.js';
import { isRecord } from '../core/shape.js';

/** The parts of a kubeconfig kplay reads. */
export interface KubeconfigSummary {
  currentContext?: string;
  /** Context name → its user. */
  contexts: Map<string, { user?: string; cluster?: string }>;
}

/** The kubeconfig file kubectl would use first: `$KUBECONFIG`'s first entry, else `~/.kube/config`. */
export function defaultKubeconfig(): string | undefined {
  return (setting('kubeconfig') ?? path.join(os.homedir(), '.kube/config')).split(path.delimiter)[0] || undefined;
}

/**
 * The parsed kubeconfig, by its text: the contexts of one kubeconfig (an inventory's clusters)
 * connect with one parse, not one each (~5 ms for the sandbox's three). The file is read every
 * time, so an edit between connections is seen; the parse is only reused for the same text.
 */
const kubeconfigDocs = new Map<string, unknown>();
function parsedKubeconfig(text: string): unknown {
  if (kubeconfigDocs.has(text)) return kubeconfigDocs.get(text);
  const doc = parseData(text);
  kubeconfigDocs.set(text, doc);
  return doc;
}

/**
 * A kubeconfig file's document (read now, parsed once per text); `undefined` when there is no
 * such file, `'unreadable'` when it cannot be read or parsed or is not a mapping.
 */
export function kubeconfigDoc(file: string | undefined): Record<string, unknown> | 'unreadable' | undefined {
  if (!file || !existsSync(file)) return undefined;
  let doc: unknown;
  try {
    doc = parsedKubeconfig(readFileSync(file, 'utf8'));
  } catch {
    return 'unreadable';
  }
  return isRecord(doc) ? doc : 'unreadable';
}

/** The entries a kubeconfig context names. */
export interface ContextEntries {
  /** The context's `cluster` entry (its `cluster:` mapping). */
  cluster: Record<string, unknown>;
  /** The context's `user` entry (its `user:` mapping); `{}` for a context that names no user. */
  user: Record<string, unknown>;
  /** The context's `namespace`, if any. */
  namespace?: string;
}

/**
 * The cluster and user entries context `context` of `doc` names; `undefined` when the context,
 * its cluster or the user it names is missing (or not a mapping).
 */
export function contextEntries(doc: Record<string, unknown>, context: string): ContextEntries | undefined {
  const named = (list: unknown, name: unknown, field: string): Record<string, unknown> | undefined => {
    if (!Array.isArray(list) || typeof name !== 'string') return undefined;
    const e: unknown = list.find((x) => isRecord(x) && x.name === name);
    return isRecord(e) && isRecord(e[field]) ? e[field] : undefined;
  };
  const ctx = named(doc.contexts, context, 'context');
  if (!ctx) return undefined;
  const cluster = named(doc.clusters, ctx.cluster, 'cluster');
  const user = ctx.user === undefined ? {} : named(doc.users, ctx.user, 'user');
  if (!cluster || !user) return undefined;
  return typeof ctx.namespace === 'string' && ctx.namespace !== '' ? { cluster, user, namespace: ctx.namespace } : { cluster, user };
}

/** Read a kubeconfig; `undefined` when there is no such file, `'unreadable'` when it cannot be parsed. */
export function readKubeconfig(file: string | undefined): KubeconfigSummary | 'unreadable' | undefined {
  const doc = kubeconfigDoc(file);
  if (doc === undefined || doc === 'unreadable') return doc;
  const contexts = new Map<string, { user?: string; cluster?: string }>();
  for (const c of Array.isArray(doc.contexts) ? doc.contexts : []) {
    if (!isRecord(c) || typeof c.name !== 'string') continue;
    const ctx = isRecord(c.context) ? c.context : {};
    contexts.set(c.name, { user: typeof ctx.user === 'string' ? ctx.user : undefined, cluster: typeof ctx.cluster === 'string' ? ctx.cluster : undefined });
  }
  return { currentContext: typeof doc['current-context'] === 'string' ? doc['current-context'] : undefined, contexts };
}

/** True when `kubeconfig` exists and defines `context` (an unreadable file counts: the connection reports it). */
export function hasKubeContext(kubeconfig: string | undefined, context: string): boolean {
  const kc = readKubeconfig(kubeconfig);
  if (kc === 'unreadable') return true;
  return kc !== undefined && kc.contexts.has(context);
}

/** The user of the current context of the default kubeconfig, if any. */
export function currentKubeUser(): string | undefined {
  const kc = readKubeconfig(defaultKubeconfig());
  if (kc === undefined || kc === 'unreadable' || !kc.currentContext) return undefined;
  return kc.contexts.get(kc.currentContext)?.user;
}
