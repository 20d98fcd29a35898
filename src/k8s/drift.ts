/**
 * What counts as drift on an object kplay manages, and who caused it. Two kinds of field:
 *
 * - **changed**: a field kplay applies whose live value differs (someone scaled, edited);
 * - **added**: a field another field manager set that kplay never applied (`kubectl set env`,
 *   `kubectl label`, a script's patch).
 *
 * Each is attributed to the field manager that owns it now (from `managedFields`). Built-in
 * rules hide what controllers legitimately do (the HPA scaling a workload, the deployment
 * controller's revision annotation, `kubectl rollout restart`); user rules (`drift_ignore`) hide
 * more. A hidden field is neither reported nor written back. `kplay drift --explain` lists them.
 */
import type { FieldAddition, FieldOwner } from './fields.js';
/** The object a field belongs to (structural: `types.ts` imports this file's types). */
export interface DriftObjectRef {
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * A user rule hiding drift (`drift_ignore:` in vars: playbook, inventory or `-e`). Every given
 * criterion must match; globs use `*`.
 * @example { kind: Deployment, name: "web-*", path: ".spec.replicas" }
 * @example { manager: "cert-manager-cainjector" }
 */
export interface DriftRule {
  /** Object kind, e.g. `Deployment`. */
  kind?: string;
  /** Object name glob. */
  name?: string;
  /** Namespace glob. */
  namespace?: string;
  /**
   * Field path (prefix): `.spec.replicas`, `.metadata.labels`, `.metadata.annotations["example.com/x"]`,
   * list items as `[name=web]` or `[*]`.
   */
  path?: string;
  /** Field manager glob of the field's current owner, e.g. `kubectl-*`. */
  manager?: string;
  /** Shown by `--explain`. */
  reason?: string;
}

/** A drifted field, attributed. */
export interface DriftField {
  /** Field path, e.g. `.spec.template.spec.containers[name=web].env[name=FOO]`. */
  path: string;
  /** `changed`: a field kplay applies has another value; `added`: a field kplay never applied. */
  change: 'changed' | 'added';
  /** The field manager that owns it now (`kubectl-set`, `kubectl`, `hpa-controller`, …), when known. */
  manager?: string;
  /** `Update` (imperative) or `Apply` (server-side apply). */
  operation?: string;
  /** When that manager last wrote the object. */
  time?: string;
  /** Whether kplay (or helm, for a release) still owns the field too. */
  kplay_owns: boolean;
}

/** A field a rule hid, with the rule. */
export interface HiddenField extends DriftField {
  rule: string;
}

/** Who a field manager is: a person or script (drift), or a controller doing its job (not drift). */
export type ManagerKind = 'person' | 'controller';

/**
 * Managers of controllers that write to the objects they reconcile. Anything else — every
 * `kubectl*` manager, scripts, unknown tools — is a person or script: its additions are drift.
 */
const CONTROLLER_MANAGERS: readonly RegExp[] = [
  /^kube-(controller-manager|scheduler|apiserver)$/,
  /^cloud-controller-manager$/,
  /^kubelet$/,
  /^before-first-apply$/,
  /^manager$/, // controller-runtime's default name (kubebuilder operators)
  /controller$/,
  /-controller-manager$/,
  /operator$/,
  /(cainjector|injector|webhook|autoscaler|admission)$/,
];

/** Classify a field manager: `kubectl*` and unknown managers are people/scripts; known controller names are controllers. */
export function managerKind(manager: string): ManagerKind {
  if (/^kubectl(-|$)/.test(manager)) return 'person';
  return CONTROLLER_MANAGERS.some((re) => re.test(manager)) ? 'controller' : 'person';
}

/** Built-in path rules: fields controllers and rollout tools own by design. */
export const BUILTIN_RULES: readonly (DriftRule & { reason: string })[] = [
  { path: '.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]', reason: 'kubectl rollout restart (a restart, not a configuration change)' },
  { path: '.metadata.annotations["deployment.kubernetes.io/revision"]', reason: 'written by the deployment controller' },
  { path: '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]', manager: 'kubectl-client-side-apply', reason: 'bookkeeping of kubectl apply (its other fields are reported)' },
  { path: '.metadata.finalizers', manager: '*controller*', reason: 'finalizers of a controller' },
];

function glob(pattern: string, value: string): boolean {
  const rx = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return rx.test(value);
}

/** True when `path` is `rulePath` or below it; `[*]` in the rule matches any list item. */
export function pathMatches(rulePath: string, path: string): boolean {
  const norm = (p: string): string => (p.startsWith('.') || p.startsWith('[') ? p : `.${p}`);
  const rx = norm(rulePath)
    .split(/(\[\*\])/)
    .map((part) => (part === '[*]' ? '\\[[^\\]]*\\]' : part.replace(/[.+?^${}()|[\]\\*]/g, '\\$&')))
    .join('');
  return new RegExp(`^${rx}(?=$|[.[])`).test(norm(path));
}

/** Whether a rule matches a field of an object. */
export function ruleMatches(rule: DriftRule, ref: DriftObjectRef, field: DriftField): boolean {
  if (rule.kind !== undefined && rule.kind !== ref.kind) return false;
  if (rule.name !== undefined && !glob(rule.name, ref.name)) return false;
  if (rule.namespace !== undefined && !glob(rule.namespace, ref.namespace ?? '')) return false;
  if (rule.path !== undefined && !pathMatches(rule.path, field.path)) return false;
  if (rule.manager !== undefined && !glob(rule.manager, field.manager ?? '')) return false;
  return true;
}

/** One-line description of a rule (for `--explain`). */
export function describeRule(rule: DriftRule, builtin: boolean): string {
  const parts = (['kind', 'namespace', 'name', 'path', 'manager'] as const).filter((k) => rule[k] !== undefined).map((k) => `${k}=${rule[k] ?? ''}`);
  return `${builtin ? 'built-in' : 'drift_ignore'}: ${parts.join(' ')}${rule.reason ? ` (${rule.reason})` : ''}`;
}

/**
 * The rule that hides a drifted field, or undefined: for additions, a controller manager; then
 * the built-in path rules; then the user's rules. For changed fields, `.spec.replicas` owned
 * through the `scale` subresource by a controller is an autoscaler's (HPA, KEDA) and hidden.
 */
export function hidingRule(ref: DriftObjectRef, field: DriftField, owner: FieldOwner | undefined, rules: readonly DriftRule[]): string | undefined {
  if (field.change === 'added' && field.manager !== undefined && managerKind(field.manager) === 'controller') return `built-in: manager ${field.manager} is a controller`;
  if (field.change === 'changed' && pathMatches('.spec.replicas', field.path) && owner?.subresource === 'scale' && managerKind(owner.manager) === 'controller') {
    return `built-in: replicas owned by an autoscaler (${owner.manager} through the scale subresource)`;
  }
  for (const r of BUILTIN_RULES) if (ruleMatches(r, ref, field)) return describeRule(r, true);
  for (const r of rules) if (ruleMatches(r, ref, field)) return describeRule(r, false);
  return undefined;
}

/** An addition as a drift field. */
export function addedField(a: FieldAddition): DriftField {
  return { path: a.path, change: 'added', manager: a.manager, operation: a.operation, time: a.time, kplay_owns: false };
}

/** Validate `drift_ignore` (a list of rules) from variables; throws a message naming the bad entry. */
export function parseDriftRules(value: unknown): DriftRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`drift_ignore must be a list of rules ({kind, name, namespace, path, manager, reason}), got ${typeof value}`);
  return value.map((r, i) => {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new Error(`drift_ignore[${i}] must be a map with kind, name, namespace, path, manager or reason`);
    const out: DriftRule = {};
    for (const [k, v] of Object.entries(r as Record<string, unknown>)) {
      if (!['kind', 'name', 'namespace', 'path', 'manager', 'reason'].includes(k)) throw new Error(`drift_ignore[${i}]: unknown key "${k}" (known: kind, name, namespace, path, manager, reason)`);
      if (typeof v !== 'string') throw new Error(`drift_ignore[${i}].${k} must be a string`);
      out[k as keyof DriftRule] = v;
    }
    if (Object.keys(out).filter((k) => k !== 'reason').length === 0) throw new Error(`drift_ignore[${i}] matches everything: give at least one of kind, name, namespace, path, manager`);
    return out;
  });
}
