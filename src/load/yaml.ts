/**
 * Safe YAML loading that remembers where every map key and list item came from, so that
 * schema, template and runtime errors can point at `file:line:col`.
 *
 * Safety: duplicate keys are errors, alias expansion is capped (billion-laughs), nesting
 * depth is capped, and `!secret` marks a scalar whose value must be masked in all output.
 */
import { readFile } from 'node:fs/promises';
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Document,
  type Node as YamlNode,
  type ScalarTag,
} from 'yaml';
import { InputError, type SourcePos } from './errors.js';

/** Maximum alias dereferences per document. */
export const MAX_ALIASES = 100;
/** Maximum nesting depth of maps/lists. */
export const MAX_DEPTH = 64;

interface PosInfo {
  self: SourcePos;
  keys: Map<string | number, SourcePos>;
}

const positions = new WeakMap<object, PosInfo>();

/** Position of an object (list/map) or of one of its keys/items, if it was loaded from YAML. */
export function posOf(obj: unknown, key?: string | number): SourcePos | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const info = positions.get(obj);
  if (!info) return undefined;
  if (key === undefined) return info.self;
  return info.keys.get(key) ?? info.self;
}

/** Copy recorded positions from one object to another (used when objects are cloned). */
export function copyPos(from: object, to: object): void {
  const info = positions.get(from);
  if (info) positions.set(to, info);
}

/**
 * Position of a JSON-pointer-like path inside a loaded value (e.g. from an ajv `instancePath`).
 * Falls back to the closest ancestor that has a position.
 */
export function posOfPath(root: unknown, path: (string | number)[]): SourcePos | undefined {
  let best = posOf(root);
  let cur: unknown = root;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') break;
    const p = posOf(cur, seg);
    if (p) best = p;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return best;
}

/** A value loaded from YAML plus the values marked `!secret`. */
export interface Loaded {
  /** One entry per YAML document (most files have exactly one). */
  docs: unknown[];
  /** Scalars tagged `!secret`: the caller registers them with the masker. */
  secrets: string[];
}

/** Parse YAML text (all documents). Throws InputError with file:line:col. */
export function parseYaml(text: string, file: string): Loaded {
  const lineCounter = new LineCounter();
  const secrets: string[] = [];
  const secretTag: ScalarTag = {
    tag: '!secret',
    resolve(str: string): string {
      secrets.push(str);
      return str;
    },
  };
  const docs = parseAllDocuments(text, {
    lineCounter,
    uniqueKeys: true,
    prettyErrors: false,
    customTags: [secretTag],
  });
  const list: Document.Parsed[] = Array.isArray(docs) ? docs : [];
  if (!Array.isArray(docs)) {
    // An EmptyStream: no documents at all.
    return { docs: [], secrets };
  }
  const at = (offset: number): SourcePos => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col };
  };
  const out: unknown[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) {
      const msg = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
      throw new InputError(`YAML error: ${msg}`, at(err.pos[0]));
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIASES });
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw new InputError(`YAML error: ${msg}`, at(0), 'reduce alias (*ref) use; kplay caps alias expansion to prevent alias bombs');
    }
    if (doc.contents) record(doc.contents as YamlNode, value, at, 0);
    out.push(value);
  }
  return { docs: out, secrets };
}

function record(node: YamlNode, value: unknown, at: (o: number) => SourcePos, depth: number): void {
  if (depth > MAX_DEPTH) {
    throw new InputError(`YAML nesting deeper than ${MAX_DEPTH} levels`, at(node.range?.[0] ?? 0));
  }
  if (isAlias(node) || value === null || typeof value !== 'object') return;
  if (positions.has(value)) return; // shared through an alias: already recorded
  const self = at(node.range?.[0] ?? 0);
  const keys = new Map<string | number, SourcePos>();
  positions.set(value, { self, keys });
  if (isMap(node)) {
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : undefined;
      if (key === undefined) continue;
      keys.set(key, at(keyNode?.range?.[0] ?? 0));
      const child = (value as Record<string, unknown>)[key];
      if (pair.value) record(pair.value as YamlNode, child, at, depth + 1);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const itemNode = item as YamlNode;
      keys.set(i, at(itemNode.range?.[0] ?? 0));
      record(itemNode, (value as unknown[])[i], at, depth + 1);
    });
  }
}

/** Read and parse a YAML file. A missing file is an InputError naming it. */
export async function loadYamlFile(file: string, from?: SourcePos): Promise<Loaded> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : String(e);
    throw new InputError(`cannot read ${file}: ${why}`, from);
  }
  return parseYaml(text, file);
}

/** Load a file that must hold exactly one YAML document. */
export async function loadYamlDoc(file: string, from?: SourcePos): Promise<{ value: unknown; secrets: string[] }> {
  const { docs, secrets } = await loadYamlFile(file, from);
  if (docs.length > 1) throw new InputError('expected a single YAML document, found several', { file, line: 1, col: 1 });
  return { value: docs[0] ?? null, secrets };
}
