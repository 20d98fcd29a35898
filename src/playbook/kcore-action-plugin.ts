/**
 * What kubernetes.core's action plugin (plugins/action/k8s_info.py, shared by its modules) checks
 * before the module's own arguments are checked: `template` is only for `k8s`. A task of another
 * kubernetes.core module with a `template` fails when it runs with the plugin's message (not when
 * the playbook loads, and before its other arguments are checked), as under ansible-playbook.
 */
import { isRecord } from '../core/shape.js';

/** kplay's modules that stand for a kubernetes.core module run through that action plugin, `k8s` aside. */
const KCORE_ACTION_MODULES = new Set(['helm', 'helm_info', 'helm_repository', 'k8s_cluster_info', 'k8s_drain', 'k8s_info', 'k8s_json_patch', 'k8s_rollback', 'k8s_scale', 'k8s_service']);

/**
 * The action plugin's refusal of these arguments of module `module`, or undefined.
 * @example kcoreActionRefusal('k8s_service', { template: 'pod.j2' }) // "'template' is only a supported parameter for the 'k8s' module."
 */
export function kcoreActionRefusal(module: string, args: unknown): string | undefined {
  if (!KCORE_ACTION_MODULES.has(module) || !isRecord(args)) return undefined;
  // the plugin tests `if template:` (an empty value is left to the module's own check)
  const t = args.template;
  const given = t !== undefined && t !== null && t !== '' && t !== false && t !== 0 && !(Array.isArray(t) && t.length === 0) && !(isRecord(t) && Object.keys(t).length === 0);
  return given ? "'template' is only a supported parameter for the 'k8s' module." : undefined;
}
