// ansible.cfg as ansible-core reads it: the INI text parsed as Python's configparser parses it with
// ansible-core's options (checked against the venv's Python), the file chosen as
// find_ini_config_file chooses it, settings read with ansible-core's precedence and origins, and
// `kplay config dump` printing them as `ansible-config dump` does.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findAnsibleCfg, IniError, parseIni } from '../../src/core/ansible-config.js';
import { settingSource } from '../../src/core/settings.js';
import { SettingError } from '../../src/core/setting-spec.js';
import { configDump } from '../../src/cli/config.js';
import { kplay } from '../helpers/cli.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const PYTHON = path.join(VENV, 'bin/python');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-ansible-cfg-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const write = (rel: string, text: string): string => {
  const p = path.join(tmp, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, text);
  return p;
};

/** What Python's configparser (as ansible-core configures it) reads from `text`: sections → raw values, or the error's class. */
function pythonIni(text: string): unknown {
  const script = [
    'import configparser, json, sys',
    "p = configparser.ConfigParser(inline_comment_prefixes=(';',))",
    'try:',
    '    p.read_string(sys.stdin.read())',
    "    print(json.dumps({s: {k: p.get(s, k, raw=True) for k in p.options(s)} for s in p.sections()}))",
    'except configparser.Error as e:',
    "    print(json.dumps({'error': type(e).__name__}))",
  ].join('\n');
  return JSON.parse(execFileSync(PYTHON, ['-c', script], { input: text, encoding: 'utf8' }));
}

/** The same from kplay's parser (`[DEFAULT]` keys folded into each section, as configparser's `options` does). */
function kplayIni(text: string): unknown {
  try {
    const s = parseIni(text, 'test.cfg');
    const defaults = s.get('DEFAULT') ?? new Map<string, string>();
    const out: Record<string, Record<string, string>> = {};
    for (const [name, keys] of s) if (name !== 'DEFAULT') out[name] = Object.fromEntries([...defaults, ...keys]);
    return out;
  } catch (e) {
    if (!(e instanceof IniError)) throw e;
    const m = e.message;
    return { error: /option '.*' in section/.test(m) ? 'DuplicateOptionError' : /section '.*' already exists/.test(m) ? 'DuplicateSectionError' : /no section headers/.test(m) ? 'MissingSectionHeaderError' : 'ParsingError' };
  }
}

const INI_CASES: Record<string, string> = {
  'key = value and key: value': '[defaults]\nroles_path = a:b\nforks: 7\n',
  'comments: whole-line # and ;, inline ; after a space, # inline kept': '# top\n; top\n[defaults]\n  # indented comment\nx = 1 ; one\ny = 2;two\nz = 3 # three\n',
  'continuation lines and blank lines inside a value': '[defaults]\nroles_path = a\n    b\n\n    c\n\nnext = 1\n',
  'keys are lower-cased, sections are not; spaces around the key': '[Defaults]\n  Roles_Path   =   x  \n',
  'an empty value, a value with = and :': '[defaults]\nempty =\nurl = http://h:1/a=b\n',
  '[DEFAULT] applies to every section': '[DEFAULT]\nforks = 3\n[defaults]\nx = 1\n[ssh_connection]\ny = 2\n',
  '%(interpolation)s is kept raw': '[defaults]\nhere = /a\nroles_path = %(here)s/roles\n',
  'quotes are kept by the parser': '[defaults]\nx = "quoted"\n',
  'a duplicate key is an error': '[defaults]\nx = 1\nx = 2\n',
  'a duplicate section is an error': '[defaults]\n[defaults]\n',
  'a key before any section is an error': 'x = 1\n[defaults]\n',
  'a line without = or : is an error': '[defaults]\njust words\n',
};

describe('ansible.cfg INI, as configparser reads it', () => {
  it.each(Object.keys(INI_CASES))('%s', (name) => {
    const text = INI_CASES[name] as string;
    expect(kplayIni(text)).toEqual(pythonIni(text));
  });
});

describe('which ansible.cfg, as find_ini_config_file', () => {
  const home = path.join(tmp, 'home');
  const cwd = path.join(tmp, 'work');
  const homeCfg = write('home/.ansible.cfg', '[defaults]\nforks = 2\n');
  const cwdCfg = write('work/ansible.cfg', '[defaults]\nforks = 3\n');
  const envCfg = write('elsewhere/ansible.cfg', '[defaults]\nforks = 4\n');

  it('ANSIBLE_CONFIG (a file or a directory), then ./ansible.cfg, then ~/.ansible.cfg', () => {
    expect(findAnsibleCfg({ HOME: home, ANSIBLE_CONFIG: envCfg }, cwd).file).toBe(envCfg);
    expect(findAnsibleCfg({ HOME: home, ANSIBLE_CONFIG: path.dirname(envCfg) }, cwd).file).toBe(envCfg);
    expect(findAnsibleCfg({ HOME: home }, cwd).file).toBe(cwdCfg);
    expect(findAnsibleCfg({ HOME: home }, tmp).file).toBe(existsSync(path.join(tmp, 'ansible.cfg')) ? path.join(tmp, 'ansible.cfg') : homeCfg);
    // an ANSIBLE_CONFIG that is not there is passed over
    expect(findAnsibleCfg({ HOME: home, ANSIBLE_CONFIG: path.join(tmp, 'missing.cfg') }, cwd).file).toBe(cwdCfg);
  });

  it('skips ./ansible.cfg of a world-writable directory, with ansible-core\'s warning', () => {
    const open = path.join(tmp, 'open');
    write('open/ansible.cfg', '[defaults]\nforks = 9\n');
    chmodSync(open, 0o777);
    const r = findAnsibleCfg({ HOME: home }, open);
    expect(r.file).toBe(homeCfg);
    expect(r.warning).toMatch(/^Ansible is being run in a world writable directory \(.*open\), ignoring it as an ansible.cfg source/);
    expect(findAnsibleCfg({ HOME: home, ANSIBLE_CONFIG: envCfg }, open).warning).toBeUndefined();
  });
});

describe('settings with Ansible names: precedence and origin', () => {
  const cfg = write('p/ansible.cfg', "[defaults]\nroles_path = roles:~/more:$XTRA/r\nforks = 6\ngathering = 'smart'\nforce_handlers = yes\ninventory = hosts.yml, /abs/inv\n");
  const env = { HOME: '/home/ops', ANSIBLE_CONFIG: cfg, XTRA: '/x' };

  it('ansible.cfg values: paths relative to the file, ~ and $VAR expanded, lists split, quotes removed', () => {
    const d = path.dirname(cfg);
    expect(settingSource('rolesPath', env, tmp)).toEqual({ value: [path.join(d, 'roles'), '/home/ops/more', '/x/r'], origin: cfg });
    expect(settingSource('forks', env, tmp)).toEqual({ value: 6, origin: cfg });
    expect(settingSource('gathering', env, tmp)).toEqual({ value: 'smart', origin: cfg });
    expect(settingSource('forceHandlers', env, tmp)).toEqual({ value: true, origin: cfg });
    expect(settingSource('inventory', env, tmp)).toEqual({ value: [path.join(d, 'hosts.yml'), '/abs/inv'], origin: cfg });
  });

  it('ANSIBLE_* over ansible.cfg (relative to the working directory), KPLAY_* over both; empty numbers give the default', () => {
    expect(settingSource('rolesPath', { ...env, ANSIBLE_ROLES_PATH: '../' }, path.join(tmp, 'p'))).toEqual({ value: [tmp], origin: 'env: ANSIBLE_ROLES_PATH' });
    expect(settingSource('rolesPath', { ...env, ANSIBLE_ROLES_PATH: '../', KPLAY_ROLES_PATH: '/k' }, tmp)).toEqual({ value: ['/k'], origin: 'env: KPLAY_ROLES_PATH' });
    expect(settingSource('forks', { ...env, ANSIBLE_FORKS: '12' }, tmp)).toEqual({ value: 12, origin: 'env: ANSIBLE_FORKS' });
    expect(settingSource('forks', { ...env, ANSIBLE_FORKS: '' }, tmp).value).toBe(6);
  });

  it('a bad value names where it came from', () => {
    expect(() => settingSource('forks', { ...env, ANSIBLE_FORKS: 'many' }, tmp)).toThrow(SettingError);
    expect(() => settingSource('forks', { ...env, ANSIBLE_FORKS: 'many' }, tmp)).toThrow(/ANSIBLE_FORKS='many' is not valid/);
    const bad = write('bad/ansible.cfg', '[defaults]\nforks = lots\n');
    expect(() => settingSource('forks', { HOME: '/home/ops', ANSIBLE_CONFIG: bad }, tmp)).toThrow(/forks \(section \[defaults\] of .*bad\/ansible.cfg\)='lots' is not valid/);
    const broken = write('broken/ansible.cfg', 'forks = 1\n');
    expect(() => settingSource('forks', { HOME: '/home/ops', ANSIBLE_CONFIG: broken }, tmp)).toThrow(/no section headers.*fix the file/s);
  });

  it('config dump lists value and origin as ansible-config dump does; --only-changed leaves defaults out', () => {
    const lines = configDump(true, { HOME: '/home/ops', ANSIBLE_CONFIG: cfg, ANSIBLE_ROLES_PATH: '/r1:/r2' }, tmp);
    expect(lines[0]).toBe(`CONFIG_FILE() = ${cfg}`);
    expect(lines).toContain("DEFAULT_ROLES_PATH(env: ANSIBLE_ROLES_PATH) = ['/r1', '/r2']");
    expect(lines).toContain(`DEFAULT_FORKS(${cfg}) = 6`);
    expect(lines).toContain(`DEFAULT_FORCE_HANDLERS(${cfg}) = True`);
    expect(lines.some((l) => l.includes('(default)'))).toBe(false);
    const all = configDump(false, { HOME: '/home/ops', ANSIBLE_CONFIG: path.join(tmp, 'none.cfg') }, tmp);
    expect(all).toContain('ANY_ERRORS_FATAL(default) = False');
    expect(all.slice(1)).toEqual([...all.slice(1)].sort());
  });

  it('kplay config dump --only-changed from the CLI', async () => {
    const r = await kplay(['config', 'dump', '--only-changed'], { cwd: tmp, env: { HOME: '/home/ops', ANSIBLE_CONFIG: cfg } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`DEFAULT_GATHERING(${cfg}) = smart`);
  });
});
