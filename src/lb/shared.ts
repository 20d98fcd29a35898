/**
 * Arguments of `lb_switch` that several providers share. `lb_switch` has one flat schema, so a
 * shared argument is declared once here (one description covering every provider that uses it);
 * a provider narrows it for itself with {@link LbProvider.narrow}.
 */
import { StringEnum, Type } from '../core/args.js';

/** `state`: haproxy (ready/drain/maint) and k8s_service (ready/drain). */
export const STATE_PROPERTY = StringEnum(['ready', 'drain', 'maint'], {
  description:
    'Wanted state. (haproxy, required) `ready` takes traffic, `drain` gets no new sessions (persistent ones continue), `maint` gets no traffic at all. ' +
    "(k8s_service) `drain` adds `drain_label` to the Service's selector so that no pod matches and the Service has no endpoints on this cluster; " +
    '`ready` removes it again (`maint` is not accepted).',
});

/** `weight`: haproxy (0–256 or percentage), ingress_canary (0–canary-weight-total), httproute (0–1000000). */
export const WEIGHT_PROPERTY = Type.Union([Type.Integer({ minimum: 0, maximum: 1000000 }), Type.String({ pattern: '^[0-9]{1,5}%$' })], {
  description:
    '(haproxy) Wanted weight: absolute `0`–`256`, or a percentage of the configured weight such as `"50%"`. ' +
    '(ingress_canary, required) Percentage of requests sent to the canary Ingress, `0`–`100` ' +
    '(`0`–N when the Ingress sets `nginx.ingress.kubernetes.io/canary-weight-total: N`). ' +
    "(httproute, required) `weight` of the backendRef, `0`–`1000000`; traffic is split in proportion to the weights of the rule's backendRefs.",
});

/** `namespace`: every Kubernetes provider. */
export const NAMESPACE_PROPERTY = Type.String({
  minLength: 1,
  maxLength: 63,
  description: "(k8s_service, ingress_canary, httproute; required) Namespace of the Service / Ingress / HTTPRoute on the task's cluster.",
});

/** `backend`: haproxy (backend / pool name) and httproute (backendRef name). */
export const BACKEND_PROPERTY = Type.String({
  minLength: 1,
  description:
    '(haproxy, required) Backend (pool) holding the server. ' +
    "(httproute, required) `name` of the backendRef whose weight is set (usually a Service); an unknown name fails and lists the route's backendRefs.",
});

