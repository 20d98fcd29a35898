/**
 * Which kubeconfig and context an inventory entry connects through, and Ansible's implicit
 * localhost.
 *
 * - kplay's `clusters:` entries: `context:` / `kubeconfig:` of the entry, else the vars
 *   `kplay_context` / `kplay_kubeconfig`, else the entry's name / the default kubeconfig.
 * - Ansible `hosts:` entries and the implicit localhost connect as kubernetes.core modules do
 *   when a task gives no connection arguments: the vars `kplay_context` / `kplay_kubeconfig`,
 *   else `$K8S_AUTH_CONTEXT` / `$K8S_AUTH_KUBECONFIG`, else the kubeconfig's current context /
 *   the first path of `$KUBECONFIG`, else `~/.kube/config`. The host's name is never a context.
 *
 * The vars are read when the inventory loads (from the entry's merged inventory vars), so they
 * must be plain strings, not templates.
 */
import { InputError } from '../load/errors.js';
import { readKubeconfig } from '../k8s/kubeconfig.js';
import { defaultKubeconfig, expandPath } from './paths.js';

/** The variable naming an entry's kubeconfig context. */
export const CONTEXT_VAR = 'kplay_context';
/** The variable naming an entry's kubeconfig file. */
export const KUBECONFIG_VAR = 'kplay_kubeconfig';
/** Host names Ansible treats as the implicit localhost (ansible-core's C.LOCALHOST). */
export const LOCALHOST_NAMES: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** What decides an entry's connection. */
export interface ConnectionInput {
  /** The entry's name (for messages, and the default context of a `clusters:` entry). */
  name: string;
  /** `context:` of a `clusters:` entry. */
  context?: string;
  /** `kubeconfig:` of a `clusters:` entry, already an absolute path. */
  kubeconfig?: string;
  /** True for a `clusters:` entry (context defaults to the name), false for an Ansible host. */
  asCluster: boolean;
  /** The entry's merged inventory vars. */
  vars: Record<string, unknown>;
}

function stringVar(vars: Record<string, unknown>, key: string, name: string): string | undefined {
  const v = vars[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw new InputError(`${name}: ${key} must be a non-empty string, got ${JSON.stringify(v)}`, undefined, 'set it to the name of a kubeconfig context (or the path of a kubeconfig file)');
  if (v.includes('{{') || v.includes('{%')) {
    throw new InputError(`${name}: ${key} is read when the inventory loads, before templates can be rendered: '${v}'`, undefined, 'write the plain value');
  }
  return v;
}

/** The current context of a kubeconfig file, or `''` when it has none or the file does not exist. */
function currentContext(kubeconfig: string, cache: Map<string, string> | undefined): string {
  const known = cache?.get(kubeconfig);
  if (known !== undefined) return known;
  const kc = readKubeconfig(kubeconfig);
  const ctx = kc === undefined || kc === 'unreadable' ? '' : (kc.currentContext ?? '');
  cache?.set(kubeconfig, ctx);
  return ctx;
}

/**
 * Resolve an entry's kubeconfig (absolute) and context, see the module header. `cache` (kubeconfig
 * path → current context) saves reading one kubeconfig once per host of a large inventory.
 */
export function resolveConnection(e: ConnectionInput, dir: string, cwd: string, env: NodeJS.ProcessEnv, cache?: Map<string, string>): { context: string; kubeconfig: string } {
  let kubeconfig = e.kubeconfig;
  const kvar = stringVar(e.vars, KUBECONFIG_VAR, e.name);
  if (kubeconfig === undefined && kvar !== undefined) {
    try {
      kubeconfig = expandPath(kvar, dir, env);
    } catch (err) {
      throw new InputError(`${e.name}: ${KUBECONFIG_VAR} ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (kubeconfig === undefined && !e.asCluster && env.K8S_AUTH_KUBECONFIG) kubeconfig = expandPath(env.K8S_AUTH_KUBECONFIG, cwd, env);
  kubeconfig ??= defaultKubeconfig(env, cwd);
  const context = e.context ?? stringVar(e.vars, CONTEXT_VAR, e.name) ?? (e.asCluster ? e.name : env.K8S_AUTH_CONTEXT || currentContext(kubeconfig, cache));
  return { context, kubeconfig };
}
