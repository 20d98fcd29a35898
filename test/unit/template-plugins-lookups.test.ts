// The lookups (src/template/lookups.ts). Expected values were checked against ansible-core 2.19
// (`query(...)`/`lookup(...)` in its templar): sequences, together/nested, seeded passwords,
// subelements (which drops the subkey from the item), env/vars defaults, pipe/lines.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOOKUPS } from '../../src/template/lookups.js';
import type { Kwargs, PluginContext } from '../../src/template/plugins.js';
import { Undef } from '../../src/template/values.js';
import { setVaultSecrets, vaultEncrypt } from '../../src/core/vault.js';

const root = mkdtempSync(path.join(tmpdir(), 'kplay-lookups-'));
const outside = mkdtempSync(path.join(tmpdir(), 'kplay-lookups-outside-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});
mkdirSync(path.join(root, 'files'));
mkdirSync(path.join(root, 'templates'));
writeFileSync(path.join(root, 'files', 'motd.txt'), '\n  hello\n\n');
writeFileSync(path.join(root, 'plain.txt'), 'top\n');
writeFileSync(path.join(root, 'templates', 't.j2'), 'name={{ name }}');
writeFileSync(path.join(root, 'files', 'a.conf'), 'a');
writeFileSync(path.join(root, 'files', 'b.conf'), 'b');
writeFileSync(path.join(root, 'files', 'c.txt'), 'c');
writeFileSync(path.join(outside, 'secret.txt'), 'nope');
symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'files', 'escape.txt'));

const secrets: string[] = [];
const rendered: { template: string; extra?: Record<string, unknown> }[] = [];
const vars: Record<string, unknown> = { name: 'web', list: [1, 2] };

function ctx(extra: Partial<PluginContext> = {}): PluginContext {
  return {
    variable: (n) => (Object.prototype.hasOwnProperty.call(vars, n) ? vars[n] : new Undef(`'${n}' is undefined`, n)),
    variableNames: () => Object.keys(vars),
    render: (template, extraVars) => {
      rendered.push({ template, extra: extraVars });
      return template.replace('{{ name }}', String(extraVars?.name ?? vars.name));
    },
    searchPaths: [root],
    fileRoots: [root],
    env: { HOME: '/home/u', PATH: process.env.PATH, GREETING: 'hi there' },
    addSecret: (s) => secrets.push(s),
    ...extra,
  };
}

function q(name: string, terms: unknown[], kwargs: Kwargs = {}, c: PluginContext = ctx()): unknown[] {
  const def = LOOKUPS.get(name);
  if (!def) throw new Error(`no lookup ${name}`);
  return def.fn(terms, kwargs, c);
}

describe('lookup names', () => {
  it('has short and fully qualified names', () => {
    for (const n of ['env', 'file', 'template', 'vars', 'pipe', 'password', 'items', 'list', 'dict', 'indexed_items', 'sequence', 'together', 'nested', 'subelements', 'fileglob', 'first_found', 'lines', 'config', 'url', 'varnames']) {
      expect(LOOKUPS.has(n), n).toBe(true);
      expect(LOOKUPS.get(`ansible.builtin.${n}`), n).toBe(LOOKUPS.get(n));
    }
    expect(LOOKUPS.get('kubernetes.core.k8s')).toBe(LOOKUPS.get('k8s'));
    expect(LOOKUPS.get('community.general.dig')).toBe(LOOKUPS.get('dig'));
  });
});

describe('env / vars', () => {
  it('reads the task environment; unset gives "" (ansible-core 2.19) or default=', () => {
    expect(q('env', ['HOME'])).toEqual(['/home/u']);
    expect(q('env', ['GREETING extra words'])).toEqual(['hi there']);
    expect(q('env', ['NOPE_X'])).toEqual(['']);
    expect(q('env', ['NOPE_X'], { default: 'd' })).toEqual(['d']);
    expect(q('env', ['NOPE_X', 'HOME'])).toEqual(['', '/home/u']);
    // an option the lookup does not declare is ignored, as ansible-core's set_options
    expect(q('env', ['HOME'], { bogus: 1 })).toEqual(['/home/u']);
  });
  it('vars: the value, default=, or an undefined value naming the variable', () => {
    expect(q('vars', ['name', 'list'])).toEqual(['web', [1, 2]]);
    expect(q('vars', ['nope'], { default: 1 })).toEqual([1]);
    const [u] = q('vars', ['nope']);
    expect(u).toBeInstanceOf(Undef);
    expect((u as Undef).message).toBe("No variable named 'nope' was found.");
    expect(() => q('vars', [3])).toThrow("Variable name must be 'str' not 'int'.");
  });
  it('varnames: names matching Python regular expressions', () => {
    expect(q('varnames', ['^na'])).toEqual(['name']);
    expect(q('varnames', ['i'])).toEqual(['list']);
  });
});

describe('file / template / fileglob / first_found', () => {
  it('file: searches files/ then the directory, rstrips by default', () => {
    expect(q('file', ['motd.txt'])).toEqual(['\n  hello']);
    expect(q('file', ['motd.txt'], { lstrip: true })).toEqual(['hello']);
    expect(q('file', ['motd.txt'], { rstrip: false })).toEqual(['\n  hello\n\n']);
    expect(q('file', ['plain.txt'])).toEqual(['top']);
    expect(q('file', [path.join(root, 'plain.txt')])).toEqual(['top']);
    expect(() => q('file', ['missing.txt'])).toThrow("Unable to access the file 'missing.txt'.");
  });
  // As Ansible: an absolute path is read as it is, a relative one is searched in the role's and
  // playbook's directories, `..` and symlinks included (kplay has `pipe` and `command`: a file
  // sandbox would only break playbooks, not protect anything)
  it('file: reads absolute paths, relative ones with .., and symlinks, wherever they lead', () => {
    expect(q('file', [path.join(outside, 'secret.txt')])).toEqual(['nope']);
    expect(q('file', ['escape.txt'])).toEqual(['nope']);
    expect(q('file', ['../' + path.basename(outside) + '/secret.txt'])).toEqual(['nope']);
    expect(q('file', ['~/' + path.relative(homedir(), path.join(outside, 'secret.txt'))])).toEqual(['nope']);
  });
  it('unvault and file: the file as it is, decrypted when vault-encrypted (without a vault secret: the error)', () => {
    expect(q('unvault', ['motd.txt'])).toEqual(['\n  hello\n\n']);
    writeFileSync(path.join(root, 'files', 'v.txt'), vaultEncrypt('vaulted line\n', Buffer.from('pw')));
    expect(() => q('unvault', ['v.txt'])).toThrow('Attempting to decrypt but no vault secrets found');
    setVaultSecrets([{ id: 'default', secret: Buffer.from('pw') }]);
    try {
      expect(q('unvault', ['v.txt'])).toEqual(['vaulted line\n']);
      expect(q('file', ['v.txt'])).toEqual(['vaulted line']);
      expect(secrets).toContain('vaulted line\n');
    } finally {
      setVaultSecrets([]);
    }
  });
  it('template: renders the file from templates/ with template_vars', () => {
    rendered.length = 0;
    expect(q('template', ['t.j2'])).toEqual(['name=web']);
    expect(q('template', ['t.j2'], { template_vars: { name: 'db' } })).toEqual(['name=db']);
    expect(rendered[1]?.extra?.template_path).toBe('t.j2');
    expect(rendered[1]?.extra?.template_fullpath).toBe(path.join(root, 'templates', 't.j2'));
    expect(() => q('template', ['none.j2'])).toThrow('the template file none.j2 could not be found for the lookup');
  });
  it('fileglob: regular files of files/, sorted', () => {
    expect(q('fileglob', ['*.conf'])).toEqual([path.join(root, 'files', 'a.conf'), path.join(root, 'files', 'b.conf')]);
    expect(q('fileglob', ['*.none'])).toEqual([]);
    expect(q('fileglob', [path.join(outside, '*.txt')])).toEqual([path.join(outside, 'secret.txt')]);
  });
  it('first_found: the first existing file, skip=, paths=', () => {
    expect(q('first_found', [['nope.yml', 'c.txt', 'a.conf']])).toEqual([path.join(root, 'files', 'c.txt')]);
    expect(q('first_found', [{ files: ['x', 'b.conf'], paths: ['files'] }])).toEqual([path.join(root, 'files', 'b.conf')]);
    expect(q('first_found', [['nope']], { skip: true })).toEqual([]);
    expect(() => q('first_found', [['nope']])).toThrow('No file was found when using first_found.');
  });
});

describe('pipe / lines', () => {
  it('runs /bin/sh -c in the playbook directory with the task environment; rstrips', () => {
    expect(q('pipe', ['printf "a\\n\\n"'])).toEqual(['a']);
    expect(q('pipe', ['echo "$GREETING"'])).toEqual(['hi there']);
    expect(q('pipe', ['pwd'])).toEqual([path.resolve(root)]);
    expect(() => q('pipe', ['exit 3'])).toThrow('lookup_plugin.pipe(exit 3) returned 3');
    expect(q('lines', ['printf "a\\nb\\n"'])).toEqual(['a', 'b']);
    expect(() => q('lines', ['false'])).toThrow('lookup_plugin.lines(false) returned 1');
  });
});

describe('password', () => {
  it('generates with Python Random when seeded (values from ansible-core)', () => {
    expect(q('password', ['/dev/null'], { seed: 'x', length: 8 })).toEqual(['O9iX65Wv']);
    expect(q('password', ['/dev/null chars=digits length=6 seed=abc'])).toEqual(['875524']);
    expect(q('password', ['/dev/null'], { chars: ['ascii_lowercase', 'digits'], length: 8, seed: 42 })).toEqual(['43sgdg3i']);
    expect(secrets).toContain('O9iX65Wv');
  });
  it('stores a new password in a file (mode 0600) and reads it back afterwards', () => {
    const [p1] = q('password', ['creds/db.txt'], { length: 12 });
    expect(typeof p1).toBe('string');
    expect((p1 as string).length).toBe(12);
    expect((p1 as string)).toMatch(/^[A-Za-z0-9.,:\-_]+$/);
    const file = path.join(root, 'creds', 'db.txt');
    expect(readFileSync(file, 'utf8')).toBe(`${String(p1)}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(q('password', ['creds/db.txt'], { length: 30 })).toEqual([p1]);
    expect(secrets).toContain(p1);
  });
  it('stores a password at an absolute path; refuses unknown parameters and encrypt=', () => {
    const [stored] = q('password', [path.join(outside, 'p.txt')]) as string[];
    expect(readFileSync(path.join(outside, 'p.txt'), 'utf8')).toBe(`${String(stored)}\n`);
    expect(() => q('password', ['/dev/null bogus=1'])).toThrow('Unrecognized parameter(s) given to password lookup: bogus');
    expect(() => q('password', ['/dev/null'], { encrypt: 'sha512_crypt' })).toThrow(/encrypt= is not supported/);
  });
});

describe('list-shaped lookups', () => {
  it('items/list/dict/indexed_items', () => {
    expect(q('items', [1, [2, [3]], 4])).toEqual([1, 2, [3], 4]);
    expect(q('list', [[1, 2]])).toEqual([[1, 2]]);
    expect(q('dict', [{ a: 1, b: 2 }])).toEqual([{ key: 'a', value: 1 }, { key: 'b', value: 2 }]);
    expect(() => q('dict', [[1]])).toThrow(/expects a dictionary/);
    expect(q('indexed_items', [['a', 'b']])).toEqual([[0, 'a'], [1, 'b']]);
  });
  it('together / nested', () => {
    expect(q('together', [[1, 2, 3], ['a', 'b']])).toEqual([[1, 'a'], [2, 'b'], [3, null]]);
    expect(q('nested', [[1, 2], ['a', 'b'], ['x']])).toEqual([[1, 'a', 'x'], [1, 'b', 'x'], [2, 'a', 'x'], [2, 'b', 'x']]);
    expect(() => q('nested', [])).toThrow('with_nested requires at least one element in the nested list');
  });
  it('subelements drops the subkey from the returned item, as Ansible does', () => {
    const l = [{ name: 'a', g: ['x', 'y'] }, { name: 'b', g: [] }];
    expect(q('subelements', [l, 'g'])).toEqual([[{ name: 'a' }, 'x'], [{ name: 'a' }, 'y']]);
    expect(l[0]).toEqual({ name: 'a', g: ['x', 'y'] });
    expect(() => q('subelements', [[{ name: 'c' }], 'g'])).toThrow("could not find 'g' key in iterated item");
    expect(q('subelements', [[{ name: 'c' }], 'g', { skip_missing: true }])).toEqual([]);
    expect(q('subelements', [[{ n: 1, a: { b: [1] } }], 'a.b'])).toEqual([[{ n: 1, a: {} }, 1]]);
    expect(q('subelements', [{ skipped: true }, 'g'])).toEqual([]);
  });
  it('sequence: shortcut and key=value forms', () => {
    expect(q('sequence', ['5'])).toEqual(['1', '2', '3', '4', '5']);
    expect(q('sequence', ['5-8'])).toEqual(['5', '6', '7', '8']);
    expect(q('sequence', ['2-10/2'])).toEqual(['2', '4', '6', '8', '10']);
    expect(q('sequence', ['4:host%02d'])).toEqual(['host01', 'host02', 'host03', 'host04']);
    expect(q('sequence', ['start=5 end=11 stride=2 format=0x%02x'])).toEqual(['0x05', '0x07', '0x09', '0x0b']);
    expect(q('sequence', ['count=5'])).toEqual(['1', '2', '3', '4', '5']);
    expect(q('sequence', [], { start: 0, end: 4, stride: 2 })).toEqual(['0', '2', '4']);
    expect(q('sequence', ['count=0'])).toEqual([]);
    expect(q('sequence', ['start=10 end=1 stride=-3'])).toEqual(['10', '7', '4', '1']);
    expect(() => q('sequence', ['10-1'])).toThrow('to count backwards make stride negative');
    expect(() => q('sequence', ['start=0x0f00 count=4 format=%04x'])).toThrow("Invalid value provided for 'integer': '0x0f00'");
    expect(() => q('sequence', ['start=1'])).toThrow('must specify count or end in with_sequence');
  });
});

describe('offline refusals and k8s', () => {
  it('url and dig say why they are not available', () => {
    expect(() => q('url', ['https://example.com'])).toThrow(/not supported by kplay/);
    expect(() => q('community.general.dig', ['example.com'])).toThrow(/not supported by kplay/);
  });
  it('config answers a few settings', () => {
    expect(q('config', ['DEFAULT_BECOME_USER'])).toEqual(['root']);
    expect(q('config', ['NOPE'], { on_missing: 'skip' })).toEqual([]);
    expect(() => q('config', ['NOPE'])).toThrow('Unable to find setting NOPE');
  });
  it('k8s without a cluster: a clear error', () => {
    expect(() => q('kubernetes.core.k8s', [], { kind: 'Pod' })).toThrow(/^the k8s lookup needs a cluster/);
  });
  it('k8s: the query it asks the cluster, a named object as a one-item list', () => {
    const asked: Record<string, unknown>[] = [];
    const pods = [{ metadata: { name: 'p1' } }, { metadata: { name: 'p2' } }];
    const c = ctx({
      k8s: {
        find: (query) => {
          asked.push(query);
          return query.name === 'none' ? [] : query.name ? [pods[0]] : pods;
        },
      },
    });
    expect(q('k8s', [], { kind: 'Pod', namespace: 'ns', label_selector: 'app=web' }, c)).toEqual(pods);
    expect(asked[0]).toEqual({ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', labelSelector: 'app=web' });
    expect(q('k8s', [], { api_version: 'apps/v1', kind: 'Deployment', resource_name: 'web', namespace: 'ns' }, c)).toEqual([pods[0]]);
    expect(asked[1]).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'ns' });
    expect(q('k8s', [], { kind: 'Pod', resource_name: 'none' }, c)).toEqual([]);
    expect(q('k8s', [], { resource_definition: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'x' } } }, c)).toEqual([pods[0]]);
    expect(asked[3]).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', namespace: 'x' });
    expect(() => q('k8s', [], {}, c)).toThrow("Error: no Kind specified. Use the 'kind' parameter");
  });
});
