// Files saved on Windows (issue 51 item 8): a UTF-8 byte-order mark at the start, CRLF line
// endings. Every parser of what a user gives drops a leading BOM, as PyYAML does (a BOM before a
// block sequence made `YAML error: Unexpected scalar at node end`), and templates render CRLF as
// Jinja does (`\n`). The values are ansible-core's: test/parity/cases/windows-files.yml compares
// them with ansible-playbook byte for byte.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withoutBom } from '../../src/load/bom.js';
import { parseData } from '../../src/load/fast-yaml.js';
import { loadYamlFile, parseYaml } from '../../src/load/yaml.js';
import { parseIniInventory } from '../../src/inventory/ini.js';
import { parseManifests } from '../../src/k8s/manifests.js';
import { loadAllDocuments } from '../../src/k8s/kcore.js';
import { kubeconfigDoc } from '../../src/k8s/kubeconfig.js';
import { templar } from '../../src/template/index.js';

const BOM = '\ufeff';
const crlf = (s: string): string => s.replace(/\n/g, '\r\n');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-windows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a byte-order mark at the start of a file', () => {
  it('withoutBom drops one leading BOM only', () => {
    expect(withoutBom(`${BOM}a`)).toBe('a');
    expect(withoutBom('a\ufeffb')).toBe('a\ufeffb');
    expect(withoutBom('')).toBe('');
  });

  it('a playbook (a block sequence), a vars file, with CRLF: the same values as without', async () => {
    const pb = path.join(tmp, 'pb.yml');
    writeFileSync(pb, BOM + crlf('- hosts: all\n  vars:\n    block: |\n      l1\n      l2\n    q: "a\u2028b"\n  tasks: []\n'));
    const { docs } = await loadYamlFile(pb);
    expect(docs).toEqual([[{ hosts: 'all', vars: { block: 'l1\nl2\n', q: 'a\u2028b' }, tasks: [] }]]);
    // the slow path (positions, !secret) too
    expect(parseYaml(BOM + crlf('x: !secret s3cret\n'), 'v.yml', { fast: false }).docs).toEqual([{ x: 's3cret' }]);
  });

  it('keeps positions right on the first line', () => {
    const { docs } = parseYaml(`${BOM}- a: 1\n`, 'pb.yml', { fast: false });
    expect(docs).toEqual([[{ a: 1 }]]);
  });

  it('an INI inventory, a manifest, a kubernetes.core definition, a kubeconfig', () => {
    const groups = parseIniInventory(BOM + crlf('[web]\nh1 x=1\n\n[web:vars]\ny=2\n'), 'hosts.ini');
    expect(Object.keys(groups)).toContain('web');
    expect(groups.web?.hosts).toHaveProperty('h1');
    expect(parseManifests(BOM + crlf('- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n'), 'm.yaml').map((o) => o.metadata.name)).toEqual(['a']);
    expect(parseManifests(BOM + crlf('apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n'), 'm.yaml').map((o) => o.metadata.name)).toEqual(['b']);
    expect(loadAllDocuments(BOM + crlf('- a: 1\n'), 'def')).toEqual([[{ a: 1 }]]);
    expect(parseData(`${BOM}- a\n`)).toEqual(['a']);
    const kc = path.join(tmp, 'kubeconfig');
    writeFileSync(kc, BOM + crlf('apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\n'));
    const doc = kubeconfigDoc(kc);
    expect(doc !== 'unreadable' && doc?.['current-context']).toBe('c');
  });

  it('from_yaml and from_yaml_all of a file read as text (lookup keeps the BOM, PyYAML skips it)', async () => {
    expect(await templar.renderValue('{{ s | from_yaml }}', { s: `${BOM}- a\r\n- b\r\n` })).toEqual(['a', 'b']);
    expect(await templar.renderValue('{{ s | from_yaml_all | list }}', { s: `${BOM}- a\n` })).toEqual([['a']]);
  });
});

describe('templates with CRLF line endings', () => {
  it('render with \\n, as Jinja reads line breaks (trim_blocks included), the trailing newlines counted as ansible-core counts them', async () => {
    expect(await templar.render(crlf('{% if true %}\nline {{ 1 + 1 }}\n{% endif %}\nend\n\n'), {})).toBe('line 2\nend\n');
    expect(await templar.render('a\r{{ x }}\r\n', { x: 1 })).toBe('a\n1\n');
    // a string without a template is not rendered: its CRLF stays, as in Ansible
    expect(await templar.render('a\r\nb', {})).toBe('a\r\nb');
  });

  it('a BOM is text to a template: kept in what it renders, as ansible-core keeps it', async () => {
    expect(await templar.render(`${BOM}{{ 1 }}`, {})).toBe(`${BOM}1`);
  });
});
