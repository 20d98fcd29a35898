// The manifest fast path (js-yaml with yaml's core scalar rules) must give exactly what `yaml`
// gives, or step aside. Compared on every YAML file of the repository and on a table of scalar
// forms and structures where YAML parsers are known to disagree.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { fastLoadAll, needsYaml, parseData } from '../../src/load/fast-yaml.js';
import { parseManifests } from '../../src/k8s/manifests.js';
import { withoutBom } from '../../src/load/bom.js';

const root = path.resolve(import.meta.dirname, '../..');

/** What kplay got before the fast path: `yaml`, YAML 1.2 core schema, every document's value. */
function slow(text: string): unknown[] | undefined {
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: true, merge: true, prettyErrors: false });
  if (docs.some((d) => d.errors.length)) return undefined;
  return docs.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
}

/** Documents compared without the empty ones (both parsers skip them differently at the edges). */
const nonEmpty = (docs: unknown[]): unknown[] => docs.filter((d) => d !== null && d !== undefined);

function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e.startsWith('.')) continue;
    const p = path.join(dir, e);
    if (statSync(p).isDirectory()) yamlFiles(p, out);
    else if (/\.(ya?ml|json)$/.test(e)) out.push(p);
  }
  return out;
}

describe('fast YAML path', () => {
  it('parses every YAML file of the repository to the same values as yaml, or steps aside', () => {
    const files = ['test', 'examples', 'playbooks', 'schemas', 'docs'].flatMap((d) => yamlFiles(path.join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    let fast = 0;
    for (const f of files) {
      // as kplay reads every file: a leading byte-order mark dropped first (src/load/bom.ts)
      const text = withoutBom(readFileSync(f, 'utf8'));
      const a = fastLoadAll(text);
      if (a === undefined) continue;
      const b = slow(text);
      // PyYAML (Ansible's parser) and js-yaml accept a multi-line quoted scalar whose last line is
      // indented like its key (`pod_query: "{{` … `}}"`), which yaml rejects; the real-world corpus
      // (each file accepted by `ansible-playbook --syntax-check`) has such files, and kplay must read them.
      if (b === undefined && f.includes(`${path.sep}fixtures${path.sep}realworld${path.sep}`)) continue;
      // yaml rejects it (a template, a deliberate error fixture): the fast path must not accept it silently.
      expect(b, `${f}: accepted by the fast path, rejected by yaml`).toBeDefined();
      expect(nonEmpty(a), f).toStrictEqual(nonEmpty(b ?? []));
      fast++;
    }
    // The fast path is actually taken for most plain data files.
    expect(fast).toBeGreaterThan(files.length / 2);
  });

  const scalars = [
    '', '~', 'null', 'Null', 'NULL', 'nULL', 'true', 'True', 'TRUE', 'tRUE', 'false', 'yes', 'no', 'on', 'off', 'y', 'n', 'Y', 'N',
    '0', '-0', '+0', '+1', '-17', '007', '08', '0o17', '0O17', '0o8', '0x1F', '0X1F', '0xg', '0b101', '1_000', '1,000',
    '1.5', '.5', '5.', '-.5', '+.5', '1e3', '1E-3', '1.0e+3', '1e', '.e3', '6.02e23', '1.', '0.', '00.5',
    '.inf', '+.inf', '-.Inf', '.INF', '.nan', '.NaN', '.NAN', 'inf', 'nan', 'Infinity', 'NaN',
    '12:30:00', '1:30', '2001-12-14', '2001-12-14t21:59:43.10-05:00', '0.5Gi', '500m', '100Mi', '1.2.3', 'v1', '=', '-', '+', '.',
    '123456789012345678901234567890', '0x7FFFFFFFFFFFFFFF', '9007199254740993', 'registry.k8s.io/pause:3.10', 'a b c', 'a #not comment', 'x: y is not a key here',
  ];
  it.each(scalars)('resolves the plain scalar %j as yaml does, as a value, a list item and a key', (s) => {
    const texts = [`k: ${s}\n`, `- ${s}\n`, `[${s}]\n`, `${s}: v\n`, `{${s}: v}\n`];
    for (const text of texts) {
      const a = fastLoadAll(text);
      const b = slow(text);
      if (a === undefined) continue; // left to yaml (e.g. a null key): nothing to compare
      expect(b, text).toBeDefined();
      expect(a, text).toStrictEqual(b);
    }
  });

  const structures: [string, string][] = [
    ['block scalars with chomping and indentation indicators', 'a: |\n  line1\n  line2\n\nb: |-\n  x\nc: >\n  folded\n  text\n\n  para\nd: >+\n  keep\n\ne: |2\n    indented\n'],
    ['multi-line plain and quoted scalars', 'a: one\n  two\n   three\nb: "x\n  y"\nc: \'it\'\'s\n  here\'\n'],
    ['escapes in double quotes', 'a: "\\x41\\u263A\\t\\/\\\\ \\"q\\" \\N \\_ \\e"\n'],
    ['flow collections', 'a: {b: [1, 2, {c: d}], e: []}\nf: [ x , "y" , \'z\' ]\ng: {}\n'],
    ['empty values and nested lists', 'a:\nb: \nc:\n  - \n  - - x\n    - y\n  -\n'],
    ['documents, markers, comments', '# head\n---\na: 1 # trailing\n...\n---\n# only a comment\n---\n---\nb: 2\n'],
    ['CRLF line endings', 'a: 1\r\nb:\r\n  - x\r\n  - "y"\r\n'],
    ['a byte order mark', '\uFEFFa: 1\n'],
    ['keys with colons and quotes', '"a:b": c\n\'d: e\': f\ng/h.i-j_k: l\nhttp://x: y\n'],
    ['long lines and unicode', `a: ${'x'.repeat(5000)}\nb: "héllo wörld ✓"\n`],
    ['numbers as keys', '1: a\n0x10: b\n1.5: c\ntrue: d\n'],
    ['a JSON document', '{"apiVersion": "v1", "kind": "List", "items": [{"a": null, "b": [true, 1.5e3]}]}\n'],
    ['indentation of sequences under keys', 'a:\n- x\n- y:\n    z: 1\n  w: 2\n'],
    ['a __proto__ key', '__proto__: {polluted: true}\nok: 1\n'],
  ];
  it.each(structures)('parses %s as yaml does', (_name, text) => {
    const a = fastLoadAll(text);
    const b = slow(text);
    expect(a, 'the fast path applies').toBeDefined();
    expect(b).toBeDefined();
    expect(nonEmpty(a ?? [])).toStrictEqual(nonEmpty(b ?? []));
  });

  const leftToYaml: [string, string][] = [
    ['anchors and aliases', 'a: &x {b: 1}\nc: *x\n'],
    ['merge keys', 'a: {b: 1}\nc:\n  <<: {d: 2}\n'],
    ['a %YAML directive', '%YAML 1.1\n---\na: yes\n'],
    ['explicit tags', 'a: !!str 1\n'],
    ['local tags', 'a: !secret x\n'],
    ['complex keys', '? [a, b]\n: c\n'],
    ['a flow sequence as a key', '[a, b]: c\n'],
    ['a flow sequence as a key in a flow map', 'x: {[a, b]: c}\n'],
    ['a flow sequence as a key without a value', 'x: {[a], y: 1}\n'],
    ['a null key', '~: a\n'],
    ['an empty key', ': a\n'],
    ['duplicate keys', 'a: 1\na: 2\n'],
    ['bad indentation', 'a:\n  b: 1\n c: 2\n'],
    ['a tab as indentation', 'a:\n\tb: 1\n'],
  ];
  it.each(leftToYaml)('leaves %s to yaml', (_name, text) => {
    expect(fastLoadAll(text)).toBeUndefined();
  });

  /** Where a node can start: a line's indentation, after `key: `, `- `, `? `, or in a flow collection. */
  const NODE_START = String.raw`(?:^[\t ]*|[:\-?,[{][\t ]+|[[{,])`;
  /** The pre-scan's specification: the regular expressions it replaced (slow on deep indentation), and the flow-sequence key it added. */
  const SPEC: readonly RegExp[] = [
    new RegExp(`${NODE_START}[&*!]\\S`, 'm'),
    /(?:^|[\s{,])<<[\t ]*:/m,
    /^%/m,
    /^[\t ]*(?:-[\t ]+)*\?(?:[\t ]|$)/m,
    /^[\t ]*(?:-[\t ]+)*(?:~|null|Null|NULL)?[\t ]*:(?:[\t ]|$)/m,
    /[{,][\t ]*(?:~|null|Null|NULL)?[\t ]*:(?:[\t ]|$)/,
    /\][\t ]*:(?:[\t ]|$)|\{\s*\[/m,
  ];
  const bySpec = (text: string): boolean => SPEC.some((re) => re.test(text));

  it('pre-scans every YAML file of the repository as its regular expressions do', () => {
    const files = ['test', 'examples', 'playbooks', 'schemas', 'docs'].flatMap((d) => yamlFiles(path.join(root, d)));
    let leftToYaml = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(needsYaml(text), f).toBe(bySpec(text));
      if (needsYaml(text)) leftToYaml++;
    }
    // both answers occur in the corpus
    expect(leftToYaml).toBeGreaterThan(0);
    expect(leftToYaml).toBeLessThan(files.length);
  });

  it('pre-scans random YAML-like text as its regular expressions do', () => {
    // Short texts over the characters the patterns look at: every line start, blank run, mark and key form.
    const pieces = ['\n', '\r', '\r\n', '\u2028', ' ', '  ', '\t', '- ', '-', '? ', '?', ':', ': ', '~', 'null', 'Null', 'NULL', 'nul', '&', '*', '!', '!!', 'a', 'b:', '{', '}', '[', ']', ',', '<<', '%', '#', '"', "'"];
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let hits = 0;
    for (let n = 0; n < 40000; n++) {
      let text = '';
      for (let k = 1 + rand(12); k > 0; k--) text += pieces[rand(pieces.length)];
      const want = bySpec(text);
      expect(needsYaml(text), JSON.stringify(text)).toBe(want);
      if (want) hits++;
    }
    expect(hits).toBeGreaterThan(1000);
    expect(hits).toBeLessThan(39000);
  });

  it('pre-scans deeply indented text in linear time', () => {
    // 2,000 lines indented by 400 blanks: quadratic in the indentation, the old patterns took
    // seconds here (counted, not timed: the scan is one pass, its answer is checked).
    const text = `${' '.repeat(400)}a: b\n`.repeat(2000);
    expect(needsYaml(text)).toBe(false);
    expect(needsYaml(`${text}${' '.repeat(400)}null: x\n`)).toBe(true);
    expect(needsYaml(`${text}${' '.repeat(400)}- *alias\n`)).toBe(true);
  });

  it('keeps the error of a malformed manifest naming its helm template', () => {
    const text = '---\n# Source: chart/templates/ok.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# Source: chart/templates/bad.yaml\nkind: ConfigMap\nmetadata: {name: b}\n';
    expect(() => parseManifests(text, 'helm template')).toThrow(/helm template document 2 \(chart\/templates\/bad\.yaml\): ConfigMap b: missing apiVersion/);
  });
});

describe('parseData (kubeconfigs)', () => {
  const kubeconfig = `apiVersion: v1
kind: Config
current-context: prod-1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmh5YTJVeUxYTmwKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
    server: https://10.0.0.1:6443
  name: prod-1
contexts:
- context: { cluster: prod-1, user: admin, namespace: default }
  name: prod-1
preferences: {}
users:
- name: admin
  user:
    token: "0123456789"
    client-key-data: null
`;
  it.each([
    ['a kubeconfig', kubeconfig],
    ['an empty file', ''],
    ['only a comment', '# nothing\n'],
    ['a kubeconfig with an anchor', 'users:\n- &u {name: a}\nx: *u\n'],
  ])('gives what yaml.parse gives: %s', (_name, text) => {
    expect(parseData(text)).toStrictEqual(YAML.parse(text));
  });
  it('throws as yaml does for several documents', () => {
    expect(() => parseData('a: 1\n---\nb: 2\n')).toThrow(/multiple documents/);
  });
});
