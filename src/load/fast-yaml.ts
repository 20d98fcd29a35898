/**
 * A fast path for plain data YAML (Kubernetes manifests, helm output, release records): js-yaml
 * parses 6–10x faster than `yaml` (0.05 s against 0.6 s for a 420 KB vendor install manifest
 * with ten large CRDs), and manifests are the one place kplay parses megabytes.
 *
 * The result must be exactly what `yaml` (YAML 1.2 core schema, as {@link parseManifests} uses
 * it) gives, so js-yaml runs with a schema that resolves plain scalars with `yaml`'s own core
 * rules (the tests compare both parsers on every fixture and on a table of scalar forms), and
 * text where the two could differ is left to `yaml`: anchors and aliases (whose expansion `yaml`
 * bounds), merge keys, `%` directives, any tag (`!!str`, `!secret`), complex keys, and null or
 * empty keys.
 * Any js-yaml error (duplicate keys, bad indentation, unknown tags) also falls back, so every
 * error message still comes from `yaml`, with its line and column.
 */
import jsyaml from 'js-yaml';
import { parse as yamlParse } from 'yaml';

// Plain scalar resolution of `yaml`'s core schema (yaml/dist/schema/core), in its order.
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT = /^[-+]?[0-9]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

const nullType = new jsyaml.Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (s: string | null) => s === null || NULL.test(s),
  construct: () => null,
  predicate: (v: unknown) => v === null,
  represent: () => 'null',
});
const boolType = new jsyaml.Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && BOOL.test(s),
  construct: (s: string) => s[0] === 't' || s[0] === 'T',
  predicate: (v: unknown) => typeof v === 'boolean',
  represent: (v: object) => String(v),
});
const intType = new jsyaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && (INT_OCT.test(s) || INT.test(s) || INT_HEX.test(s)),
  construct: (s: string) => (INT_OCT.test(s) ? parseInt(s.substring(2), 8) : INT.test(s) ? parseInt(s, 10) : parseInt(s.substring(2), 16)),
  predicate: (v: unknown) => Number.isInteger(v),
  represent: (v: object) => String(v),
});
const floatType = new jsyaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && (FLOAT_NAN.test(s) || FLOAT_EXP.test(s) || FLOAT.test(s)),
  construct: (s: string) => (FLOAT_NAN.test(s) ? (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY) : parseFloat(s)),
  predicate: (v: unknown) => typeof v === 'number',
  represent: (v: object) => String(v),
});

/** js-yaml's failsafe schema (str, seq, map) plus `yaml`'s core scalar rules. */
const SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: [nullType, boolType, intType, floatType] });

/** Where a node can start: a line's indentation, after `key: `, `- `, `? `, or in a flow collection. */
const NODE_START = String.raw`(?:^[\t ]*|[:\-?,[{][\t ]+|[[{,])`;
/**
 * Text the fast path leaves to `yaml`: anchors (`&a`) and aliases (`*a`) — `yaml` bounds their
 * expansion —, tags (`!!str`, `!secret`), merge keys (`<<:`), directives (`%YAML`), complex keys
 * (`? `) and keys that are null or empty (`~:`, `null:`, `: x`; js-yaml names them `null`, `yaml`
 * the empty string). One regex scan, conservative: a false alarm (`a && b` after `- `) only costs
 * speed.
 */
const NEEDS_YAML = [
  new RegExp(`${NODE_START}[&*!]\\S`, 'm'),
  /(?:^|[\s{,])<<[\t ]*:/m,
  /^%/m,
  /^[\t ]*(?:-[\t ]+)*\?(?:[\t ]|$)/m,
  /^[\t ]*(?:-[\t ]+)*(?:~|null|Null|NULL)?[\t ]*:(?:[\t ]|$)/m,
  /[{,][\t ]*(?:~|null|Null|NULL)?[\t ]*:(?:[\t ]|$)/,
];

/** What js-yaml names a flow map used as a key (`{{ .Release.Name }}` unquoted in a chart template); `yaml` names it by its text. */
const OBJECT_KEY = '[object Object]';

/** Whether a loaded value has a key js-yaml made from a flow map (bounded walk; then the fast path steps aside). */
function hasObjectKey(v: unknown, depth = 0): boolean {
  if (depth > 64 || v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some((x) => hasObjectKey(x, depth + 1));
  for (const [k, x] of Object.entries(v)) if (k === OBJECT_KEY || hasObjectKey(x, depth + 1)) return true;
  return false;
}

/**
 * The documents of `text` as plain values, or `undefined` when the fast path does not apply or
 * fails (the caller then parses with `yaml`, which reports any error). Empty documents are
 * `null`, as `yaml`'s `toJS()` gives them.
 */
export function fastLoadAll(text: string): unknown[] | undefined {
  if (NEEDS_YAML.some((re) => re.test(text))) return undefined;
  try {
    const docs: unknown[] = [];
    jsyaml.loadAll(text, (d) => docs.push(d === undefined ? null : d), { schema: SCHEMA, json: false });
    return text.includes('{') && docs.some((d) => hasObjectKey(d)) ? undefined : docs;
  } catch {
    return undefined;
  }
}

/**
 * One document of plain data (a kubeconfig), as `yaml`'s `parse` gives it: through the fast path
 * when it applies, else `yaml` (which also throws the errors, e.g. for several documents).
 */
export function parseData(text: string): unknown {
  const docs = fastLoadAll(text);
  return docs?.length === 1 ? docs[0] : yamlParse(text);
}

/** Offsets of one loaded map or list (see `yaml.ts`): the node's start, and each key's or item's. */
export interface NodeOffsets {
  self: number;
  keys: Map<string | number, number>;
}

/** A node js-yaml composed: where `composeNode` started, where it ended, and its children. */
interface Composed {
  open: number;
  close: number;
  result: unknown;
  children: Composed[];
}

/** Offset of the first character of content at or after `i` (skips spaces, line breaks, comments). */
function contentStart(text: string, i: number): number {
  for (;;) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ''))) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return text.length;
      i = nl + 1;
    } else return i;
  }
}

/**
 * Like {@link fastLoadAll}, plus where every map, list, key and list item starts — the positions
 * `yaml.ts` records from `yaml`'s node ranges (a collection starts at its first key, `-`, `{` or
 * `[`; a key or item at its first character). Built from js-yaml's node events; `undefined` when
 * the fast path does not apply, when a document is empty, when nesting exceeds `maxDepth` (the
 * caller's `yaml` path reports that), or when the events do not pair up as expected.
 */
export function fastLoadAllWithOffsets(text: string, maxDepth: number): { docs: unknown[]; offsets: Map<object, NodeOffsets> } | undefined {
  // js-yaml drops a byte order mark, which would shift every offset.
  if (text.charCodeAt(0) === 0xfeff || NEEDS_YAML.some((re) => re.test(text))) return undefined;
  const roots: Composed[] = [];
  const stack: Composed[] = [];
  const docs: unknown[] = [];
  try {
    jsyaml.loadAll(text, (d) => docs.push(d), {
      schema: SCHEMA,
      json: false,
      listener(type, state) {
        if (type === 'open') {
          const node: Composed = { open: state.position, close: -1, result: undefined, children: [] };
          (stack.at(-1)?.children ?? roots).push(node);
          stack.push(node);
        } else {
          const node = stack.pop();
          if (node) {
            node.close = state.position;
            node.result = state.result;
          }
        }
      },
    });
  } catch {
    return undefined;
  }
  if (!docs.length || docs.some((d) => d === undefined || d === null) || stack.length) return undefined;
  const tops = roots.filter((r) => r.result !== undefined && r.result !== null);
  if (tops.length !== docs.length) return undefined;
  const offsets = new Map<object, NodeOffsets>();
  const walk = (node: Composed, value: unknown, depth: number): boolean => {
    if (value === null || typeof value !== 'object') return true;
    if (depth > maxDepth || node.result !== value) return false;
    const keys = new Map<string | number, number>();
    offsets.set(value, { self: contentStart(text, node.open), keys });
    if (Array.isArray(value)) {
      const items = node.children;
      if (items.length !== value.length) return false;
      return items.every((item, i) => {
        keys.set(i, contentStart(text, item.open));
        return walk(item, value[i], depth + 1);
      });
    }
    // A map's children are its keys and values in order; a key is the scalar a `:` follows (a
    // value never is), and a key without a value composes no value node.
    const record = value as Record<string, unknown>;
    for (let i = 0; i < node.children.length; i++) {
      const key = node.children[i];
      if (!key || !/^[\t ]*:/.test(text.slice(key.close, key.close + 64))) return false;
      const name = String(key.result);
      keys.set(name, contentStart(text, key.open));
      const next = node.children[i + 1];
      if (next && !/^[\t ]*:/.test(text.slice(next.close, next.close + 64))) {
        i++;
        if (!walk(next, record[name], depth + 1)) return false;
      } else if (record[name] !== null && record[name] !== undefined && typeof record[name] === 'object') return false;
    }
    return keys.size === Object.keys(record).length;
  };
  if (text.includes('{') && docs.some((d) => hasObjectKey(d))) return undefined;
  return tops.every((t, i) => walk(t, docs[i], 0)) ? { docs, offsets } : undefined;
}
