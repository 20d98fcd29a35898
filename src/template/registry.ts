/** The filters, tests and lookups every evaluation can call (short and fully qualified names). */
import type { Registry } from './evaluate.js';
import { FILTERS, LIQUID_FILTERS } from './filters/index.js';
import { K8S_LOOKUPS } from './k8s-lookup.js';
import { LOOKUPS } from './lookups.js';
import { TESTS } from './tests.js';

/** The one registry of the engine. */
export const REGISTRY: Registry = { filters: FILTERS, liquidFilters: LIQUID_FILTERS, tests: TESTS, lookups: new Map([...LOOKUPS, ...K8S_LOOKUPS]) };
