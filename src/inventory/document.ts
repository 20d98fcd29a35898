/**
 * Reading one inventory file: YAML (kplay's and Ansible's format) or INI, and checking a YAML
 * document's top level, names and schema before the builder walks it. Every error is an
 * InputError positioned at `file:line:col` when the input has a position.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError, type SourcePos } from '../load/errors.js';
import { validateOrThrow } from '../load/schema.js';
import { decryptFileData, getMaxInputBytes, leafValues, loadYamlDoc, posOf } from '../load/yaml.js';
import { didYouMean } from '../load/suggest.js';
import { kindOf } from './builder.js';
import { isRecord } from '../core/shape.js';
import { parseIniInventory } from './ini.js';
import { inventorySchema, NAME_PATTERN } from './schema.js';
import { YAML_EXTS } from './source.js';

const NAME_RE = new RegExp(NAME_PATTERN);

/** Keys of a group node, in both formats (for "did you mean"). */
const KNOWN_KEYS = ['vars', 'clusters', 'hosts', 'children', 'context', 'kubeconfig'];
/** Top-level keys that are sections, not groups: the `all:` line is probably missing. */
const SECTION_KEYS = ['vars', 'clusters', 'hosts', 'children'];

/** Check names and reject self-referencing YAML aliases before schema validation (which would loop). */
function precheckGroup(node: unknown, ancestors: Set<object>): void {
  if (!isRecord(node)) return;
  ancestors.add(node);
  const clusters = node.clusters;
  if (isRecord(clusters)) {
    for (const key of Object.keys(clusters)) {
      if (!NAME_RE.test(key)) throw new InputError(`invalid cluster name '${key}'`, posOf(clusters, key), 'names may only contain letters, digits, _, . and -');
    }
  }
  const children = node.children;
  if (isRecord(children)) {
    for (const key of Object.keys(children)) {
      if (!NAME_RE.test(key)) throw new InputError(`invalid group name '${key}'`, posOf(children, key), 'names may only contain letters, digits, _, . and -');
      const child = children[key];
      if (isRecord(child) && ancestors.has(child)) throw new InputError(`recursive YAML alias: group '${key}' contains itself`, posOf(children, key));
      precheckGroup(child, ancestors);
    }
  }
  ancestors.delete(node);
}

/** Validate the top level and the schema; throws positioned InputErrors. */
function validateDocument(value: unknown, file: string): asserts value is Record<string, unknown> {
  const top: SourcePos = { file, line: 1, col: 1 };
  const example = 'expected:\n    all:\n      vars: {...}\n      hosts: {...}     # or clusters: {...}\n      children: {...}';
  if (value === null || value === undefined) throw new InputError('the inventory is empty: expected a top-level `all:` group', top, example);
  if (!isRecord(value)) throw new InputError(`the inventory must be a map of groups (usually the single key 'all'), not ${kindOf(value)}`, posOf(value) ?? top, example);
  const keys = Object.keys(value);
  if (keys.length === 0) throw new InputError('the inventory is empty: expected a top-level `all:` group', posOf(value) ?? top, example);
  if (keys.includes('plugin')) {
    throw new InputError('inventory plugin configuration files are not supported', posOf(value, 'plugin') ?? top, 'list the clusters in a YAML or INI inventory (all: hosts: / children:)');
  }
  for (const key of keys) {
    if (SECTION_KEYS.includes(key)) {
      throw new InputError(
        `the top level of an inventory holds groups; '${key}' is a section of a group`,
        posOf(value, key) ?? top,
        `put it under the group 'all':\n    all:\n      ${key}: ...`,
      );
    }
    if (!NAME_RE.test(key)) throw new InputError(`invalid group name '${key}'`, posOf(value, key) ?? top, 'names may only contain letters, digits, _, . and -');
    if (key === 'ungrouped') continue;
    precheckGroup(value[key], new Set());
  }
  try {
    validateOrThrow(inventorySchema, value, 'inventory', { fallbackPos: top });
  } catch (e) {
    if (e instanceof InputError && !e.hint) {
      const m = /unknown key '([^']*)'/.exec(e.message);
      if (m) {
        const hint = didYouMean(m[1] ?? '', KNOWN_KEYS) ?? 'allowed keys: groups have vars, hosts (Ansible) or clusters (kplay), children; clusters have context, kubeconfig, vars';
        throw new InputError(e.message, e.pos, hint);
      }
    }
    throw e;
  }
}

/** True when a parsed YAML value has the shape of a YAML inventory (a map of groups). */
function looksLikeYamlInventory(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every((v) => v === null || isRecord(v));
}

/**
 * Read one inventory file: `.yml`/`.yaml`/`.json` as a YAML inventory, `.ini` as an INI one; any
 * other file as YAML when it parses to a map of groups, else as INI (ansible-core tries its yaml
 * plugin, then its ini plugin).
 */
export async function readInventoryFile(file: string): Promise<{ doc: Record<string, unknown>; secrets: string[] }> {
  const ext = path.extname(file);
  if (ext !== '.ini') {
    let loaded: { value: unknown; secrets: string[] } | undefined;
    let yamlError: unknown;
    try {
      loaded = await loadYamlDoc(file);
    } catch (e) {
      yamlError = e;
    }
    if (YAML_EXTS.includes(ext) || ext === '.json' || (loaded && looksLikeYamlInventory(loaded.value))) {
      if (!loaded) throw yamlError;
      validateDocument(loaded.value, file);
      return { doc: loaded.value, secrets: loaded.secrets };
    }
  }
  const size = (await stat(file)).size;
  if (size > getMaxInputBytes()) {
    throw new InputError(`${file} is ${size} bytes, more than the input limit of ${getMaxInputBytes()} bytes`, { file, line: 1, col: 1 }, 'raise the limit with --max-input-bytes N (or KPLAY_MAX_INPUT_BYTES) if this file is meant to be this large');
  }
  // an INI inventory may be vault-encrypted as a whole, as ansible-core's ini plugin reads it
  const { data, vaulted } = decryptFileData(await readFile(file), file);
  const doc = parseIniInventory(data.toString('utf8'), file);
  return { doc, secrets: vaulted ? leafValues(doc) : [] };
}
