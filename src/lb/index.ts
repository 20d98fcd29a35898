/**
 * Registry of `lb_switch` providers. Adding a provider = one file in `src/lb/` exporting an
 * {@link LbProvider}, plus one entry here.
 */
import { haproxyProvider, type HaproxySwitchArgs } from './haproxy.js';
import type { LbProvider } from './provider.js';

export type { LbProvider } from './provider.js';
export type { HaproxySwitchArgs } from './haproxy.js';

/** Arguments of `lb_switch`: a union over the providers, discriminated by `provider`. */
export type LbSwitchArgs = HaproxySwitchArgs;

/** Every provider, in documentation order. */
export const PROVIDERS: readonly LbProvider<LbSwitchArgs>[] = [haproxyProvider];
