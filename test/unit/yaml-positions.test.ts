// Playbooks, inventories and vars files of plain data are parsed by js-yaml (src/load/fast-yaml.ts)
// and must get exactly the values AND the positions `yaml` gives: every error message points at a
// file:line:col recorded here. Compared on every YAML file of the repository and on shapes where
// the two parsers' node boundaries differ (comments, empty values, flow collections, block scalars).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fastLoadAllWithOffsets } from '../../src/load/fast-yaml.js';
import { parseYaml, posOf } from '../../src/load/yaml.js';

const root = path.resolve(import.meta.dirname, '../..');

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e.startsWith('.')) continue;
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) yamlFiles(p, out);
    else if (/\.ya?ml$/.test(e)) out.push(p);
  }
  return out;
}

/** Every recorded position under `value`, as `path → file:line:col`. */
function positionsOf(value: unknown, at = '$', out: Record<string, string> = {}): Record<string, string> {
  if (value === null || typeof value !== 'object') return out;
  const self = posOf(value);
  out[at] = self ? `${self.line}:${self.col}` : 'none';
  for (const [k, v] of Object.entries(value)) {
    const p = posOf(value, Array.isArray(value) ? Number(k) : k);
    out[`${at}.${k}@`] = p ? `${p.line}:${p.col}` : 'none';
    positionsOf(v, `${at}.${k}`, out);
  }
  return out;
}

/** Parse both ways; `undefined` when the fast path steps aside (or `yaml` fails). */
function compare(text: string, file = 'f.yml'): { fast: Record<string, string>; slow: Record<string, string>; fastDocs: unknown[]; slowDocs: unknown[] } | undefined {
  if (!fastLoadAllWithOffsets(text, 64)) return undefined;
  let slow;
  try {
    slow = parseYaml(text, file, { fast: false });
  } catch {
    // PyYAML (Ansible's parser) and js-yaml accept a quoted multi-line scalar closed at its key's
    // indentation, which yaml refuses; the real-world corpus (each file accepted by
    // `ansible-playbook --syntax-check`) has such files, which kplay must read (see fast-yaml.test.ts)
    if (file.includes(`${path.sep}fixtures${path.sep}realworld${path.sep}`)) return undefined;
    throw new Error(`fast path accepted text that yaml refuses:\n${text}`);
  }
  const fast = parseYaml(text, file);
  return { fast: positionsOf(fast.docs), slow: positionsOf(slow.docs), fastDocs: fast.docs, slowDocs: slow.docs };
}

const SHAPES: Record<string, string> = {
  'play with nested blocks': '- hosts: all\n  vars:\n    a: 1\n    "b c": [1, {x: 2}]\n  tasks:\n    - name: t\n      debug: { msg: "hi" }\n    -   name: u\n        debug:\n          msg: >\n            folded\n',
  'comments between key and value': 'a: # note\n  # more\n  b: 1\nc:\n  # lead\n  - x # trailing\n  -   # empty item comment\n    y\n',
  'empty values': 'a:\nb:\nc: ~\nd: []\ne: {}\nf:\n  g:\n  h: 2\n',
  'sequence at the key indentation': 'tasks:\n- name: a\n  debug: {}\n- name: b\n',
  'document markers': '---\n# head\n- a: 1\n---\n- b: [x, y]\n...\n',
  'block scalars': 'a: |\n  x\n  y\nb: >-\n  folded\nc:\n  - |\n    in a list\n',
  'quoted keys and values': '"a b": \'c\'\n\'d\': "e: f"\n"g": {"h": "i", \'j\': [1]}\n',
  'nested flow': 'a: {b: [1, {c: [2, 3]}], d: {}}\nlist: [[1], [2, [3]]]\n',
  'crlf line ends': 'a: 1\r\nb:\r\n  - c: 2\r\n',
  'numbers and booleans as keys': '1: one\ntrue: yes\n0x10: hex\n1.5: f\n',
  'tab after colon': 'a:\t1\nb:\n  c:\t[1]\n',
  'indented seq items with maps': 'roles:\n  - role: web\n    vars: { x: 1 }\n  -\n    role: db\n',
  'long plain multi-line scalar': 'a: this is\n  a folded\n  plain scalar\nb:\n  c: 1\n',
};

describe('positions of the fast YAML path', () => {
  for (const [name, text] of Object.entries(SHAPES)) {
    it(`match yaml: ${name}`, () => {
      const r = compare(text);
      expect(r, 'the fast path should take this shape').toBeDefined();
      expect(r?.fastDocs).toStrictEqual(r?.slowDocs);
      expect(r?.fast).toStrictEqual(r?.slow);
    });
  }

  it('match yaml on every YAML file of the repository that it takes', () => {
    const files = ['test', 'examples', 'playbooks', 'docs'].flatMap((d) => yamlFiles(path.join(root, d)));
    let taken = 0;
    for (const f of files) {
      const r = compare(readFileSync(f, 'utf8'), f);
      if (!r) continue;
      taken++;
      expect(r.fastDocs, f).toStrictEqual(r.slowDocs);
      expect(r.fast, f).toStrictEqual(r.slow);
    }
    expect(taken).toBeGreaterThan(files.length / 2);
  });

  it('steps aside for tags, anchors, merge keys, a byte order mark and too deep nesting', () => {
    for (const text of ['a: !secret x\n', 'a: &x 1\nb: *x\n', 'a:\n  <<: {b: 1}\n', '\ufeffa: 1\n', '{a: 1, b}\n']) expect(fastLoadAllWithOffsets(text, 64), text).toBeUndefined();
    expect(fastLoadAllWithOffsets('a: [[[[1]]]]\n', 3)).toBeUndefined();
    expect(fastLoadAllWithOffsets('a: [[[[1]]]]\n', 5)).toBeDefined();
  });
});
