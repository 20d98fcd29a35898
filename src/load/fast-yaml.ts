/**
 * A fast path for plain data YAML (Kubernetes manifests, helm output, release records): js-yaml
 * parses 6–10x faster than `yaml` (0.05 s against 0.6 s for a 420 KB vendor install manifest
 * with ten large CRDs), and manifests are the one place kplay parses megabytes.
 *
 * The result must be exactly what `yaml` gives with the same scalar rules — YAML 1.2 core for
 * kplay's own manifests and kubeconfigs ({@link parseManifests}, as kubectl reads them), PyYAML's
 * YAML 1.1 (`yaml11.ts`) for what Ansible reads (`yaml.ts`, kubernetes.core's `src` files) —, so
 * js-yaml runs with a schema resolving plain scalars with those rules (the tests compare both
 * parsers on every fixture and on a table of scalar forms), and
 * text where the two could differ is left to `yaml`: anchors and aliases (whose expansion `yaml`
 * bounds), merge keys, `%` directives, any tag (`!!str`, `!secret`), complex keys, and null or
 * empty keys.
 * Any js-yaml error (duplicate keys, bad indentation, unknown tags) also falls back, so every
 * error message still comes from `yaml`, with its line and column.
 */
import jsyaml from 'js-yaml';
import { parse as yamlParse } from 'yaml';
import { withoutBom } from './bom.js';
import { BOOL as BOOL11, boolFromYaml, FLOAT as FLOAT11, floatNumberFromYaml, INT as INT11, intFromYaml, NULL as NULL11 } from './yaml11.js';

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

/** A js-yaml implicit type for one of PyYAML's resolvers (`yaml11.ts`). */
function type11(name: string, test: RegExp, make: (s: string) => unknown, predicate: (v: unknown) => boolean): jsyaml.Type {
  return new jsyaml.Type(`tag:yaml.org,2002:${name}`, {
    kind: 'scalar',
    resolve: (s: string | null) => (s === null ? name === 'null' : test.test(s)),
    construct: (s: string | null) => (s === null ? null : make(s)),
    predicate,
    represent: (v: object) => String(v),
  });
}

/** js-yaml's failsafe schema plus PyYAML's YAML 1.1 scalar rules, in PyYAML's order. */
const SCHEMA11 = jsyaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    type11('bool', BOOL11, boolFromYaml, (v) => typeof v === 'boolean'),
    type11('float', FLOAT11, floatNumberFromYaml, (v) => typeof v === 'number' && !Number.isInteger(v)),
    type11('int', INT11, intFromYaml, (v) => Number.isInteger(v)),
    type11('null', NULL11, () => null, (v) => v === null),
  ],
});

/** Which plain scalar rules a load follows: `core` (YAML 1.2, kubectl's) or `yaml11` (PyYAML's, Ansible's). */
export type ScalarRules = 'core' | 'yaml11';

/**
 * Text the fast path leaves to `yaml`: anchors (`&a`) and aliases (`*a`) — `yaml` bounds their
 * expansion —, tags (`!!str`, `!secret`), merge keys (`<<:`), directives (`%YAML`), complex keys
 * (`? `) and keys that are null or empty (`~:`, `null:`, `: x`; js-yaml names them `null`, `yaml`
 * the empty string). Conservative: a false alarm (`a && b` after `- `) only costs speed.
 *
 * Linear in the text (it runs over every manifest set, megabytes for some): anchors, aliases and
 * tags are found from their characters and checked backwards for a node start (a line's
 * indentation, after `key: `, `- `, `? `, or in a flow collection); the line-start forms are
 * matched from each line break, never with a multiline `^` followed by runs of blanks (that was
 * quadratic in the indentation: 57 ms for a 420 KB set). The unit tests hold it to the answers of
 * those regular expressions.
 */
export function needsYaml(text: string): boolean {
  if (DIRECTIVE.test(text) || MERGE_KEY.test(text) || FLOW_NULL_KEY.test(text) || LINE_KEY.test(text) || SEQUENCE_KEY.test(text)) return true;
  for (const m of text.matchAll(NODE_MARK)) if (atNodeStart(text, m.index)) return true;
  return false;
}

/** `&`, `*` or `!` before a non-blank: an anchor, alias or tag where a node starts (see {@link atNodeStart}). */
const NODE_MARK = /[&*!]\S/g;
/**
 * Where a flow sequence can be a key: its end before `: ` (`[a, b]: c`), or its start as the first
 * entry of a flow map (`{[a]}`). js-yaml names such a key `a,b`, `yaml` `[ a, b ]`; unlike a flow
 * map key (see `hasObjectKey`), nothing in the loaded value shows it. Not caught: a sequence as a
 * key without a value after another entry of a flow map (`{x: 1, [a]}`) — matching `, [` would
 * send every nested flow sequence (`[[1], [2]]`) to the slow parser.
 */
const SEQUENCE_KEY = /\][\t ]*:(?:[\t ]|$)|\{\s*\[/m;
/** A directive (`%YAML`) at a line's start. */
const DIRECTIVE = /(?:^|[\n\r\u2028\u2029])%/;
/** A merge key (`<<:`). */
const MERGE_KEY = /(?:^|[\s{,])<<[\t ]*:/;
/** A null or empty key in a flow map (`{~: x}`, `{: x}`). */
const FLOW_NULL_KEY = /[{,][\t ]*(?:(?:~|null|Null|NULL)[\t ]*)?:(?:[\t ]|$)/;
/**
 * At a line's start (the text's, or after a line break as a multiline `^` matches: `\n`, `\r`,
 * U+2028, U+2029), after indentation and `- ` items: a complex key (`? `) or a null or empty key
 * (`~:`, `null:`, `:`). Every run of blanks is followed by a character that ends it, so the
 * match is linear.
 */
const LINE_KEY = /(?:^|[\n\r\u2028\u2029])[\t ]*(?:-[\t ]+)*(?:\?|(?:(?:~|null|Null|NULL)[\t ]*)?:)(?:[\t ]|$|(?=[\n\r\u2028\u2029]))/;

/** Whether position `i` is where a node can start: after a line's indentation, after `:`, `-`, `?`, `,`, `[` or `{` and blanks, or right after `[`, `{` or `,`. */
function atNodeStart(text: string, i: number): boolean {
  const before = text[i - 1];
  if (before === undefined || before === '[' || before === '{' || before === ',' || LINE_BREAK.has(before)) return true;
  let j = i - 1;
  while (j >= 0 && (text[j] === ' ' || text[j] === '\t')) j--;
  if (j === i - 1) return false;
  const c = text[j];
  return c === undefined || LINE_BREAK.has(c) || ':-?,[{'.includes(c);
}

/** What a multiline `^` matches after. */
const LINE_BREAK = new Set(['\n', '\r', '\u2028', '\u2029']);

/** What js-yaml names a flow map used as a key (`{{ .Release.Name }}` unquoted in a chart template); `yaml` names it by its text. */
const OBJECT_KEY = '[object Object]';

/**
 * Where a flow map can be a key: its end before `:` (an implicit key is on one line), or its start
 * as an entry of a flow map (`{{ .Release.Name }}`, a key without a value). Text without either
 * needs no {@link hasObjectKey} walk.
 */
const FLOW_MAP_KEY = /\}[\t ]*:|[{,]\s*\{/;

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
 * `null`, as `yaml`'s `toJS()` gives them. `rules`: the plain scalar rules (see {@link ScalarRules}).
 */
export function fastLoadAll(text: string, rules: ScalarRules = 'core'): unknown[] | undefined {
  if (needsYaml(text)) return undefined;
  try {
    const docs: unknown[] = [];
    jsyaml.loadAll(text, (d) => docs.push(d === undefined ? null : d), { schema: rules === 'yaml11' ? SCHEMA11 : SCHEMA, json: false });
    return FLOW_MAP_KEY.test(text) && docs.some((d) => hasObjectKey(d)) ? undefined : docs;
  } catch {
    return undefined;
  }
}

/**
 * One document of plain data (a kubeconfig), as `yaml`'s `parse` gives it: through the fast path
 * when it applies, else `yaml` (which also throws the errors, e.g. for several documents).
 */
export function parseData(given: string): unknown {
  const text = withoutBom(given);
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
export function fastLoadAllWithOffsets(text: string, maxDepth: number, rules: ScalarRules = 'core'): { docs: unknown[]; offsets: Map<object, NodeOffsets> } | undefined {
  // js-yaml drops a byte order mark, which would shift every offset.
  if (text.charCodeAt(0) === 0xfeff || needsYaml(text)) return undefined;
  const roots: Composed[] = [];
  const stack: Composed[] = [];
  const docs: unknown[] = [];
  try {
    jsyaml.loadAll(text, (d) => docs.push(d), {
      schema: rules === 'yaml11' ? SCHEMA11 : SCHEMA,
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
