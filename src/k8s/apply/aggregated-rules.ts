/**
 * The one change an apply makes to a manifest before applying it: the empty `rules` of an
 * aggregated ClusterRole are left out (their owner is the controller manager).
 */
import type { KubeObject } from '../types.js';
import { isRecord } from '../../core/shape.js';

/**
 * `obj` without the empty `rules` of an aggregated ClusterRole (one with an `aggregationRule`):
 * the controller manager's clusterrole-aggregation-controller owns and fills them in, so a
 * manifest's `rules: []` (Knative ships it: "filled in by the controller manager") would make
 * every later apply conflict with that controller (and, forced, empty them until it fills them
 * in again). The empty list says nothing the aggregation does not; non-empty rules are applied
 * as given. Other objects are returned as they are.
 */
export function withoutAggregatedRules(obj: KubeObject): KubeObject {
  if (obj.kind !== 'ClusterRole' || obj.apiVersion !== 'rbac.authorization.k8s.io/v1' || !isRecord(obj.aggregationRule)) return obj;
  if (!('rules' in obj) || (obj.rules !== null && !(Array.isArray(obj.rules) && obj.rules.length === 0))) return obj;
  const { rules: _empty, ...rest } = obj;
  return rest;
}
