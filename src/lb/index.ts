/**
 * Registry of `lb_switch` providers. Adding a provider = one file in `src/lb/` exporting an
 * {@link LbProvider}, plus one entry here.
 */
import { haproxyProvider, type HaproxySwitchArgs } from './haproxy.js';
import { httpRouteProvider, type HttpRouteSwitchArgs } from './httproute.js';
import { ingressCanaryProvider, type IngressCanarySwitchArgs } from './ingress_canary.js';
import { k8sServiceProvider, type K8sServiceSwitchArgs } from './k8s_service.js';
import type { LbProvider } from './provider.js';

export type { LbProvider } from './provider.js';
export type { HaproxySwitchArgs } from './haproxy.js';
export type { K8sServiceSwitchArgs } from './k8s_service.js';
export type { IngressCanarySwitchArgs } from './ingress_canary.js';
export type { HttpRouteSwitchArgs } from './httproute.js';

/** Arguments of `lb_switch`: a union over the providers, discriminated by `provider`. */
export type LbSwitchArgs = HaproxySwitchArgs | K8sServiceSwitchArgs | IngressCanarySwitchArgs | HttpRouteSwitchArgs;

/** Every provider, in documentation order. */
export const PROVIDERS: readonly LbProvider<LbSwitchArgs>[] = [haproxyProvider, k8sServiceProvider, ingressCanaryProvider, httpRouteProvider];
