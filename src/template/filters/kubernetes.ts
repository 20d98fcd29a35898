/**
 * kubernetes.core's filter (`k8s_config_resource_name`) and community.general's `json_query`
 * (JMESPath through the `jmespath` package, the JavaScript implementation of the same
 * specification as the Python `jmespath` that community.general uses).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as JmesPath from 'jmespath';
import type { FilterDef } from '../plugins.js';
import { ExprError, isMap, mkFloat, toPlain } from '../values.js';
import { req } from './args.js';
import { filter, text } from './def.js';
import { dumps } from './pyjson.js';

/** Recursively sort dict keys (kubernetes.core's `sorted_dict`). */
function sortedDict(v: unknown): unknown {
  if (!isMap(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) Object.defineProperty(out, k, { value: sortedDict(v[k]), enumerable: true, writable: true, configurable: true });
  return out;
}

/** kubernetes.core's `generate_hash`: the 10-character suffix of a ConfigMap/Secret name. */
export function generateHash(resource: Record<string, unknown>): string {
  const meta = isMap(resource.metadata) ? resource.metadata : {};
  const name = Object.prototype.hasOwnProperty.call(meta, 'name') ? meta.name : '';
  const generateName = Object.prototype.hasOwnProperty.call(meta, 'generateName') ? meta.generateName : '';
  const copy: Record<string, unknown> = { ...resource };
  let key = 'name';
  copy.name = name;
  if (name === '' && generateName) {
    delete copy.name;
    key = 'generateName';
    copy.generateName = generateName;
  }
  let keys: string[];
  if (resource.kind === 'ConfigMap') keys = ['data', 'kind', key];
  else if (resource.kind === 'Secret') keys = ['data', 'kind', key, 'type'];
  else throw new ExprError('', undefined, 'k8s_config_resource_name works on ConfigMap and Secret resources only');
  const sorted = sortedDict(copy) as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const k of keys) ordered[k] = Object.prototype.hasOwnProperty.call(sorted, k) ? sorted[k] : '';
  const marshalled = dumps(ordered, { separators: [',', ':'] });
  const hex = createHash('sha256').update(marshalled, 'utf8').digest('hex').slice(0, 10);
  return hex.replace(/[013ae]/g, (c) => ({ '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' })[c] ?? c);
}

/** A plain JSON-like copy for the JMESPath library (floats unboxed). */
function plainForJmes(v: unknown): unknown {
  return toPlain(v);
}

/**
 * JavaScript numbers do not say int or float: a query whose outermost expression is `avg(…)` gives
 * a float in Python, so its integral result becomes a float here too. Other float results that
 * happen to be integral (a `sum` of floats, `to_number('2.0')`) stay ints (documented difference).
 */
function fromJmes(v: unknown, expr: string): unknown {
  if (typeof v === 'number' && /^\s*avg\s*\(/.test(expr) && /\)\s*$/.test(expr)) return mkFloat(v);
  return v;
}

/** The jmespath package, required by the first `json_query` rather than bundled (~55 KB of code every start-up otherwise). */
let jmespath: typeof JmesPath | undefined;
const requireLazy = createRequire(import.meta.url);

/** The filters of kubernetes.core and community.general, by short name. */
export const KUBERNETES_FILTERS: Readonly<Record<string, FilterDef>> = {
  k8s_config_resource_name: filter({ fn: 'k8s_config_resource_name', params: [] }, (v) => {
    if (!isMap(v) || !isMap(v.metadata) || !Object.prototype.hasOwnProperty.call(v.metadata, 'name')) {
      throw new ExprError('resource must have a metadata.name key to generate a resource name');
    }
    return `${text(v.metadata.name)}-${generateHash(v)}`;
  }),
  json_query: filter({ fn: 'json_query', params: [req('expr')] }, (v, a) => {
    const expr = text(a.get('expr'));
    let out: unknown;
    try {
      jmespath ??= requireLazy('jmespath') as typeof JmesPath;
      out = jmespath.search(plainForJmes(v), expr);
    } catch (e) {
      if (e instanceof ExprError) throw e;
      const msg = e instanceof Error ? e.message : String(e);
      throw new ExprError(`JMESPathError in json_query filter plugin:\n${msg}`);
    }
    return fromJmes(out, expr);
  }),
};


