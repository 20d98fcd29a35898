/**
 * Registry of `lb_switch` providers. Adding a provider = one file in `src/lb/` exporting an
 * {@link LbProvider}, plus one entry here.
 */
import { haproxyProvider, type HaproxySwitchArgs } from './haproxy.js';
import { httpRouteProvider, type HttpRouteSwitchArgs } from './httproute.js';
import { ingressCanaryProvider, type IngressCanarySwitchArgs } from './ingress_canary.js';
import { k8sServiceProvider, type K8sServiceSwitchArgs } from './k8s_service.js';
import type { AnyLbProvider } from './provider.js';

export type { AnyLbProvider, LbProvider } from './provider.js';
export type { HaproxySwitchArgs } from './haproxy.js';
export type { K8sServiceSwitchArgs } from './k8s_service.js';
export type { IngressCanarySwitchArgs } from './ingress_canary.js';
export type { HttpRouteSwitchArgs } from './httproute.js';

/** Arguments of `lb_switch`: a union over the providers, discriminated by `provider`. */
export type LbSwitchArgs = HaproxySwitchArgs | K8sServiceSwitchArgs | IngressCanarySwitchArgs | HttpRouteSwitchArgs;

/** Every provider, in documentation order (their argument types are erased: `lb_switch` validates per provider). */
export const PROVIDERS: readonly AnyLbProvider[] = [haproxyProvider, k8sServiceProvider, ingressCanaryProvider, httpRouteProvider];
