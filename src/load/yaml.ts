/**
 * Safe YAML loading that remembers where every map key and list item came from, so that
 * schema, template and runtime errors can point at `file:line:col`.
 *
 * Safety: alias expansion is capped (billion-laughs), nesting depth is capped, and `!secret`
 * marks a scalar whose value must be masked in all output. A duplicate key is what ansible-core's
 * `duplicate_dict_key` says (default `warn`: the last value is kept, with ansible-core's warning;
 * `error`; `ignore`).
 * Ansible Vault: an inline `!vault |` scalar is decrypted (its plaintext is a secret, like
 * `!secret`; one that no given password opens fails where it is used), and so is a whole
 * vault-encrypted file (every string in it is a secret; one that cannot be decrypted fails here).
 */
import { setting } from '../core/settings.js';
import { DEFAULT_MAX_INPUT_BYTES, DEFAULT_MAX_YAML_DEPTH } from '../core/settings-table.js';
import { readFile, stat } from 'node:fs/promises';
import {
  Parser,
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
import { formatPos, InputError, type SourcePos } from './errors.js';
import { withoutBom } from './bom.js';
import { fastLoadAllWithOffsets } from './fast-yaml.js';
import { YAML11_TAGS } from './yaml11.js';
import { rememberOwnSecret } from '../core/provenance.js';
import { decryptBytes, decryptText, isVaultText, rememberVaulted, undecryptable, VaultError, vaultSecrets } from '../core/vault.js';

/** Maximum alias dereferences per document. */
export const MAX_ALIASES = 100;
/** Default maximum nesting depth of maps/lists (`KPLAY_MAX_YAML_DEPTH` raises it, up to 1000). */
export const MAX_DEPTH = DEFAULT_MAX_YAML_DEPTH;
const maxDepth = (): number => setting('maxYamlDepth');
const DEPTH_HINT = 'flatten the structure, or raise the limit with KPLAY_MAX_YAML_DEPTH=N (at most 1000)';
export { DEFAULT_MAX_INPUT_BYTES };

let maxInputBytes = DEFAULT_MAX_INPUT_BYTES;

/** What a duplicate map key is (ansible-core's `duplicate_dict_key`). */
export type DuplicateKeyMode = 'warn' | 'error' | 'ignore';
let duplicateKeysOverride: DuplicateKeyMode | undefined;
/** The mode of the parse under way (read once per parse). */
let duplicateKeys: DuplicateKeyMode = 'warn';
/** Where load warnings go (stderr unless set). */
let warnSink: (msg: string) => void = (msg) => process.stderr.write(`WARNING: ${msg}\n`);

/**
 * Set what a duplicate map key is (ansible-core's `duplicate_dict_key`: `warn`, `error`,
 * `ignore`), over the `duplicateDictKey` setting (`ANSIBLE_DUPLICATE_YAML_DICT_KEY`,
 * ansible.cfg's `duplicate_dict_key`); `undefined`: the setting again.
 */
export function setDuplicateKeyMode(mode: DuplicateKeyMode | undefined): void {
  duplicateKeysOverride = mode;
}

/** Send YAML load warnings (a duplicate key) to `sink` instead of stderr; returns the previous sink. */
export function setYamlWarningSink(sink: (msg: string) => void): (msg: string) => void {
  const previous = warnSink;
  warnSink = sink;
  return previous;
}

/** Set the input file size cap (`--max-input-bytes`, `KPLAY_MAX_INPUT_BYTES`). */
export function setMaxInputBytes(n: number): void {
  if (Number.isFinite(n) && n > 0) maxInputBytes = Math.floor(n);
}

/** The input file size cap in force. */
export function getMaxInputBytes(): number {
  return maxInputBytes;
}

/**
 * Depth of the deepest collection in `text` and where it starts, from the CST (an iterative
 * walk: it cannot overflow the stack however deep the input is).
 */
export function deepestNesting(text: string): { depth: number; offset: number } {
  let max = 0;
  let at = 0;
  type Item = { key?: unknown; value?: unknown };
  type Tok = { type?: string; value?: unknown; items?: Item[]; offset?: number };
  for (const doc of new Parser().parse(text)) {
    const stack: [unknown, number][] = [[doc, 0]];
    while (stack.length) {
      const [n, d] = stack.pop() ?? [undefined, 0];
      if (!n || typeof n !== 'object') continue;
      const t = n as Tok;
      const nd = t.type === 'block-map' || t.type === 'block-seq' || t.type === 'flow-collection' ? d + 1 : d;
      if (nd > max) {
        max = nd;
        at = typeof t.offset === 'number' ? t.offset : at;
      }
      if (t.type === 'document') stack.push([t.value, nd]);
      for (const it of t.items ?? []) {
        stack.push([it.key, nd]);
        stack.push([it.value, nd]);
      }
    }
  }
  return { depth: max, offset: at };
}

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
 * Record positions for `to`, a copy of `from` whose keys were renamed (`rename`: old → new), so
 * errors about a renamed key (e.g. `ansible.builtin.debug` → `debug`) still point at it.
 */
export function copyPosRenamed(from: object, to: object, rename: ReadonlyMap<string, string>): void {
  const info = positions.get(from);
  if (!info) return;
  const keys = new Map(info.keys);
  for (const [oldKey, newKey] of rename) {
    const p = info.keys.get(oldKey);
    if (p) keys.set(newKey, p);
  }
  positions.set(to, { self: info.self, keys });
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

/** A `yaml` LineCounter for `text` without parsing it (for positions found by the fast path). */
function countLines(text: string): LineCounter {
  const lc = new LineCounter();
  lc.addNewLine(0);
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lc.addNewLine(i + 1);
  return lc;
}

/**
 * Parse Ansible YAML text (all documents), plain scalars resolved as PyYAML's YAML 1.1 resolver
 * does (`yaml11.ts`) — unless the text is JSON, which ansible-core reads as JSON. Throws InputError with file:line:col. Plain data (no tags,
 * anchors, merge keys, …) is parsed by js-yaml with the same values and positions
 * (`fast-yaml.ts`, ~5x faster on a cold start); everything else, and every error, by `yaml`.
 * `fast: false` forces `yaml` (the tests compare both).
 */
export function parseYaml(given: string, file: string, opts: { fast?: boolean } = {}): Loaded {
  duplicateKeys = duplicateKeysOverride ?? (setting('duplicateDictKey') as DuplicateKeyMode);
  const text = withoutBom(given);
  // ansible-core reads a file that is JSON as JSON first (`1e3` a number there); its numbers are YAML 1.2's
  const json = isJson(text);
  if (opts.fast !== false) {
    const fast = fastLoadAllWithOffsets(text, maxDepth(), json ? 'core' : 'yaml11');
    if (fast) {
      const lc = countLines(text);
      const at = (offset: number): SourcePos => ({ file, ...lc.linePos(offset) });
      for (const [value, o] of fast.offsets) positions.set(value, { self: at(o.self), keys: new Map([...o.keys].map(([k, v]) => [k, at(v)])) });
      return { docs: fast.docs, secrets: [] };
    }
  }
  const lineCounter = new LineCounter();
  const secrets: string[] = [];
  const secretTag: ScalarTag = {
    tag: '!secret',
    resolve(str: string): string {
      secrets.push(str);
      rememberOwnSecret(str);
      return str;
    },
  };
  const vaultTag: ScalarTag = {
    tag: '!vault',
    resolve(str: string): string {
      let plain: string;
      try {
        plain = decryptText(str.trim());
      } catch (e) {
        // as ansible-core 2.19: an inline value that cannot be decrypted (no vault secret, or
        // none that opens it) fails where it is used (`ignore_errors`, `rescue` apply)
        if (e instanceof VaultError) return undecryptable(str.trim(), `Attempt to use undecryptable variable: ${e.message} (${file})`);
        throw e;
      }
      secrets.push(plain);
      rememberVaulted(plain);
      return plain;
    },
  };
  const at = (offset: number): SourcePos => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, col };
  };
  const tooDeep = (): InputError => {
    // Only reached when composing overflowed the stack: find the place with an iterative scan.
    const { depth, offset } = deepestNesting(text);
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const col = offset - before.lastIndexOf('\n');
    return new InputError(`YAML nesting ${depth} levels deep, more than the limit of ${maxDepth()}`, { file, line, col }, DEPTH_HINT);
  };
  const parse = () =>
    parseAllDocuments(text, {
      lineCounter,
      // YAML merge keys (`<<: *base`), which Ansible's loader (and Kubernetes') supports.
      merge: true,
      uniqueKeys: duplicateKeys === 'error',
      prettyErrors: false,
      // plain scalars as PyYAML's YAML 1.1 resolver reads them (`yes`, `010`, `1_000`), as ansible-core does
      schema: json ? 'core' : 'failsafe',
      customTags: json ? [secretTag, vaultTag] : [...YAML11_TAGS, secretTag, vaultTag],
    });
  let docs: ReturnType<typeof parse>;
  try {
    docs = parse();
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep();
    throw e;
  }
  const list: Document.Parsed[] = Array.isArray(docs) ? docs : [];
  if (!Array.isArray(docs)) {
    // An EmptyStream: no documents at all.
    return { docs: [], secrets };
  }
  const out: unknown[] = [];
  for (const doc of list) {
    const err = doc.errors[0];
    if (err && /Maximum call stack/.test(err.message)) throw tooDeep();
    if (err) {
      if (err.code === 'DUPLICATE_KEY') throw duplicateKey(text, err.pos[0], at);
      if (err.code === 'TAG_RESOLVE_FAILED' && /vault|decrypt|unhexlify/i.test(err.message)) throw vaultError(err.message.split('\n')[0] ?? '', file, at(err.pos[0]));
      const msg = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      throw new InputError(`YAML error: ${msg}`, at(err.pos[0]));
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIASES });
    } catch (e) {
      if (e instanceof RangeError) throw tooDeep();
      const msg = e instanceof Error ? e.message : String(e);
      throw new InputError(`YAML error: ${msg}`, at(0), 'reduce alias (*ref) use; kplay caps alias expansion to prevent alias bombs');
    }
    if (doc.contents) record(doc.contents as YamlNode, value, at, 0);
    out.push(value);
  }
  return { docs: out, secrets };
}

/** Whether `text` is a JSON object or array (ansible-core's `from_yaml` tries `json.loads` first). */
function isJson(text: string): boolean {
  const c = text.trimStart()[0];
  if (c !== '{' && c !== '[') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A duplicate key error naming the key and both places: the repeated key is at `offset`; the
 * first one is found by scanning back through the same map (same indentation, or the same
 * flow map on one line).
 */
function duplicateKey(text: string, offset: number, at: (o: number) => SourcePos): InputError {
  const rest = text.slice(offset);
  const m = /^("(?:[^"\\]|\\.)*"|'[^']*'|[^:\n,{}]+?)\s*:/.exec(rest);
  const key = m?.[1]?.trim() ?? '';
  const here = at(offset);
  let first: SourcePos | undefined;
  if (key) {
    const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
    const indent = offset - lineStart;
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // a flow map on the same line: `{a: 1, a: 2}`
    const sameLine = new RegExp(`[{,]\\s*${escaped}\\s*:`).exec(text.slice(lineStart, offset));
    if (sameLine) first = at(lineStart + sameLine.index + sameLine[0].indexOf(key));
    let end = lineStart - 1;
    while (!first && end > 0) {
      const start = text.lastIndexOf('\n', end - 1) + 1;
      const line = text.slice(start, end);
      end = start - 1;
      if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
      const lead = line.length - line.trimStart().length;
      const body = line.slice(lead).replace(/^- /, '  ');
      const col = lead + (line.slice(lead).startsWith('- ') ? 2 : 0);
      if (col === indent && new RegExp(`^\\s*${escaped}\\s*:`).test(body)) first = at(start + col);
      else if (lead < indent && !line.slice(lead).startsWith('- ')) break; // left the map
      else if (lead < indent && col < indent) break;
    }
  }
  const where = first ? ` (first defined at line ${first.line}, column ${first.col})` : '';
  return new InputError(`YAML error: duplicate key ${JSON.stringify(key)}${where}`, here, 'a key may appear only once in a map; remove or rename one of them');
}

function record(node: YamlNode, value: unknown, at: (o: number) => SourcePos, depth: number): void {
  if (depth > maxDepth()) {
    throw new InputError(`YAML nesting deeper than the limit of ${maxDepth()} levels`, at(node.range?.[0] ?? 0), DEPTH_HINT);
  }
  if (isAlias(node) || value === null || typeof value !== 'object') return;
  if (positions.has(value)) return; // shared through an alias: already recorded
  const self = at(node.range?.[0] ?? 0);
  const keys = new Map<string | number, SourcePos>();
  positions.set(value, { self, keys });
  if (isMap(node)) {
    const keyOf = (k: unknown): string | undefined => (isScalar(k) ? String(k.value) : undefined);
    const last = new Map<string, number>();
    node.items.forEach((pair, i) => {
      const k = keyOf(pair.key);
      if (k !== undefined) last.set(k, i);
    });
    for (const [i, pair] of node.items.entries()) {
      const keyNode = pair.key as YamlNode | null;
      const key = keyOf(keyNode);
      if (key === undefined) continue;
      const here = at(keyNode?.range?.[0] ?? 0);
      // ansible-core's words (its default, `warn`); the last value is the one kept
      if (keys.has(key) && key !== '<<' && duplicateKeys === 'warn') warnSink(`${formatPos(here)}: Found duplicate mapping key '${key}'. Using last defined value only.`);
      keys.set(key, here);
      const child = (value as Record<string, unknown>)[key];
      // a value a later duplicate replaced is not the one loaded: its positions are not recorded
      if (pair.value && last.get(key) === i) record(pair.value as YamlNode, child, at, depth + 1);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const itemNode = item as YamlNode;
      keys.set(i, at(itemNode.range?.[0] ?? 0));
      record(itemNode, (value as unknown[])[i], at, depth + 1);
    });
  }
}

/** A vault error as an InputError at `pos`, with what to do next. */
function vaultError(message: string, file: string, pos: SourcePos): InputError {
  const msg = message.replace(/ at line \d+, column \d+:?$/, '').replace(/\.$/, '');
  const none = vaultSecrets().length === 0;
  return new InputError(`${msg} on ${file}`, pos, none ? 'give the vault password: --vault-password-file FILE, --vault-id LABEL@SOURCE or --ask-vault-pass (or ANSIBLE_VAULT_PASSWORD_FILE)' : 'none of the vault passwords given opens it: check --vault-id / --vault-password-file');
}

/** Every string (and number) inside a loaded value: the secrets of a vault-encrypted file. */
export function leafValues(value: unknown, out: string[] = [], depth = 0): string[] {
  if (typeof value === 'string' || typeof value === 'number') out.push(String(value));
  else if (depth < 64 && value !== null && typeof value === 'object') for (const v of Object.values(value as Record<string, unknown>)) leafValues(v, out, depth + 1);
  return out;
}

/**
 * Parse the text of a file that may be vault-encrypted as a whole: decrypted with the run's vault
 * secrets (every value in it is then a secret), else parsed as it is.
 * @throws InputError naming the file when it cannot be decrypted.
 */
export function parseYamlMaybeVaulted(text: string, file: string): Loaded {
  if (!isVaultText(text)) return parseYaml(text, file);
  let plain: string;
  try {
    plain = decryptText(text);
  } catch (e) {
    if (e instanceof VaultError) throw vaultError(e.message, file, { file, line: 1, col: 1 });
    throw e;
  }
  const loaded = parseYaml(plain, file);
  return { docs: loaded.docs, secrets: [...loaded.secrets, ...loaded.docs.flatMap((d) => leafValues(d))] };
}

/**
 * The text of a file that may be vault-encrypted (the `file` lookup, `copy src`, templates),
 * decrypted with the run's vault secrets; `vaulted` says it was (its content is then a secret).
 * `realFile`: a file a module reads (copy, template), whose error without any secret is ansible-core's `get_real_file` one.
 * @throws InputError naming the file when it cannot be decrypted.
 */
export function decryptFileData(data: Buffer, file: string, opts: { realFile?: boolean } = {}): { data: Buffer; vaulted: boolean } {
  const head = data.subarray(0, 14).toString('latin1');
  if (head !== '$ANSIBLE_VAULT') return { data, vaulted: false };
  // a file a module copies or renders (ansible-core's get_real_file) says so in its own words
  if (opts.realFile && vaultSecrets().length === 0) throw new InputError(`A vault password or secret must be specified to decrypt ${file}`, { file, line: 0, col: 0 }, 'give the vault password: --vault-password-file FILE, --vault-id LABEL@SOURCE or --ask-vault-pass');
  try {
    return { data: decryptBytes(data.toString('latin1')), vaulted: true };
  } catch (e) {
    if (e instanceof VaultError) throw vaultError(e.message, file, { file, line: 1, col: 1 });
    throw e;
  }
}

/** Read and parse a YAML file. A missing file is an InputError naming it. */
export async function loadYamlFile(file: string, from?: SourcePos): Promise<Loaded> {
  let text: string;
  try {
    const size = (await stat(file)).size;
    if (size > maxInputBytes) {
      throw new InputError(
        `${file} is ${size} bytes, more than the input limit of ${maxInputBytes} bytes`,
        { file, line: 1, col: 1 },
        'raise the limit with --max-input-bytes N (or KPLAY_MAX_INPUT_BYTES) if this file is meant to be this large',
      );
    }
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof InputError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : String(e);
    throw new InputError(`cannot read ${file}: ${why}`, from);
  }
  return parseYamlMaybeVaulted(text, file);
}

/** Load a file that must hold exactly one YAML document. */
export async function loadYamlDoc(file: string, from?: SourcePos): Promise<{ value: unknown; secrets: string[] }> {
  const { docs, secrets } = await loadYamlFile(file, from);
  if (docs.length > 1) throw new InputError('expected a single YAML document, found several', { file, line: 1, col: 1 });
  return { value: docs[0] ?? null, secrets };
}
