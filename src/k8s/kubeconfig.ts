/**
 * Reading a kubeconfig file for what kplay decides before connecting: whether a context exists
 * (no context → no cluster to lock) and who the current user is (who approves a plan). The
 * connection itself is @kubernetes/client-node's (src/k8s/client.ts).
 */
import { setting } from '../core/settings.js';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseData } from '../load/fast-yaml.js';
import { isRecord } from '../load/shape.js';

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

/** Read a kubeconfig; `undefined` when there is no such file, `'unreadable'` when it cannot be parsed. */
export function readKubeconfig(file: string | undefined): KubeconfigSummary | 'unreadable' | undefined {
  if (!file || !existsSync(file)) return undefined;
  let doc: unknown;
  try {
    doc = parseData(readFileSync(file, 'utf8'));
  } catch {
    return 'unreadable';
  }
  if (!isRecord(doc)) return 'unreadable';
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
