// The settings table (src/core/settings-table.ts; read by src/core/settings.ts): each variable is read through one accessor that gives
// the default when unset, parses once, and names the variable when a value is bad.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kplay } from '../helpers/cli.js';
import { checkSettings, setting, settingSource } from '../../src/core/settings.js';
import { DEFAULT_MAX_INPUT_BYTES, SETTINGS, type SettingName } from '../../src/core/settings-table.js';
import { SettingError } from '../../src/core/setting-spec.js';

describe('settings', () => {
  it('give their defaults when the variable is unset', () => {
    const env = { HOME: '/home/ops' };
    expect(setting('recordDir', env)).toBe('.kplay/runs');
    expect(setting('outageSeconds', env)).toBe(60);
    expect(setting('execTimeoutSeconds', env)).toBe(30);
    expect(setting('maxYamlDepth', env)).toBe(64);
    expect(setting('maxInputBytes', env)).toBe(DEFAULT_MAX_INPUT_BYTES);
    expect(setting('helm', env)).toBe('helm');
    // Ansible's default roles path, under $HOME (an ansible.cfg without roles_path)
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-settings-'));
    writeFileSync(path.join(dir, 'empty.cfg'), '[defaults]\n');
    expect(settingSource('rolesPath', { ...env, ANSIBLE_CONFIG: path.join(dir, 'empty.cfg') }, dir)).toEqual({ value: ['/home/ops/.ansible/roles', '/usr/share/ansible/roles', '/etc/ansible/roles'], origin: 'default' });
    expect(setting('checkResults', env)).toBe(false);
    expect(setting('debug', env)).toBe(false);
    expect(setting('noColor', env)).toBe(false);
    expect(setting('statsFile', env)).toBeUndefined();
    expect(setting('fleetNamespace', env)).toBeUndefined();
  });

  it('parse the values kplay has always accepted', () => {
    expect(setting('outageSeconds', { KPLAY_OUTAGE_SECONDS: '3' })).toBe(3);
    expect(setting('outageSeconds', { KPLAY_OUTAGE_SECONDS: '0' })).toBe(0);
    expect(setting('outageSeconds', { KPLAY_OUTAGE_SECONDS: '' })).toBe(60);
    expect(setting('execTimeoutSeconds', { KPLAY_EXEC_TIMEOUT_SECONDS: '2.5' })).toBe(2.5);
    expect(setting('maxYamlDepth', { KPLAY_MAX_YAML_DEPTH: '200' })).toBe(200);
    expect(setting('maxYamlDepth', { KPLAY_MAX_YAML_DEPTH: '5000' })).toBe(1000); // capped, as before
    expect(setting('maxInputBytes', { KPLAY_MAX_INPUT_BYTES: '1024' })).toBe(1024);
    expect(setting('helm', { KPLAY_HELM: '' })).toBe('helm');
    expect(setting('helm', { KPLAY_HELM: '/opt/helm' })).toBe('/opt/helm');
    expect(setting('rolesPath', { KPLAY_ROLES_PATH: '/a::/b' })).toEqual(['/a', '/b']);
    expect(setting('checkResults', { KPLAY_CHECK_RESULTS: '1' })).toBe(true);
    expect(setting('checkResults', { KPLAY_CHECK_RESULTS: 'off' })).toBe(false);
    expect(setting('debug', { KPLAY_DEBUG: 'yes' })).toBe(true);
    expect(setting('noColor', { NO_COLOR: '' })).toBe(false);
    expect(setting('noColor', { NO_COLOR: 'anything' })).toBe(true);
    expect(setting('statsFile', { KPLAY_STATS_FILE: '' })).toBeUndefined();
    // strings are taken as they are: an empty KPLAY_RECORD_DIR is the working directory, as before
    expect(setting('recordDir', { KPLAY_RECORD_DIR: '' })).toBe('');
    expect(setting('fleetContext', { KPLAY_FLEET_CONTEXT: 'in-cluster' })).toBe('in-cluster');
  });

  it('refuse bad values with an error naming the variable and what is accepted', () => {
    const bad: [SettingName, Record<string, string>, RegExp][] = [
      ['outageSeconds', { KPLAY_OUTAGE_SECONDS: 'abc' }, /KPLAY_OUTAGE_SECONDS='abc' is not valid: use a number at least 0/],
      ['outageSeconds', { KPLAY_OUTAGE_SECONDS: '-1' }, /KPLAY_OUTAGE_SECONDS='-1'/],
      ['execTimeoutSeconds', { KPLAY_EXEC_TIMEOUT_SECONDS: '0' }, /KPLAY_EXEC_TIMEOUT_SECONDS='0' is not valid: use a number more than 0/],
      ['maxYamlDepth', { KPLAY_MAX_YAML_DEPTH: '1.5' }, /KPLAY_MAX_YAML_DEPTH='1.5' is not valid: use a whole number at least 1/],
      ['maxInputBytes', { KPLAY_MAX_INPUT_BYTES: '8MiB' }, /KPLAY_MAX_INPUT_BYTES='8MiB'/],
      ['checkResults', { KPLAY_CHECK_RESULTS: 'maybe' }, /KPLAY_CHECK_RESULTS='maybe' is not valid: use 1 or 0/],
    ];
    for (const [name, env, msg] of bad) {
      let err: unknown;
      try {
        setting(name, env);
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(SettingError);
      expect((err as SettingError).variable).toBe(SETTINGS[name].env);
      expect((err as Error).message).toMatch(msg);
    }
    expect(() => checkSettings({ KPLAY_OUTAGE_SECONDS: '10', KPLAY_DEBUG: 'loud' })).toThrow(/KPLAY_DEBUG='loud'/);
    expect(() => checkSettings({ KPLAY_OUTAGE_SECONDS: '10' })).not.toThrow();
  });

  it('read the environment each time, so a changed variable takes effect', () => {
    const env: Record<string, string> = { HELM_DRIVER: 'secret' };
    expect(setting('helmDriver', env)).toBe('secret');
    env.HELM_DRIVER = 'sql';
    expect(setting('helmDriver', env)).toBe('sql');
  });

  it('are each documented once, one variable per setting', () => {
    const names = Object.keys(SETTINGS) as SettingName[];
    const vars = names.map((n) => SETTINGS[n].env);
    expect(new Set(vars).size).toBe(vars.length);
    for (const n of names) {
      expect(SETTINGS[n].doc.length, n).toBeGreaterThan(10);
      expect(SETTINGS[n].env, n).toMatch(/^[A-Z][A-Z0-9_]*$/);
    }
  });

  it('are the only way src/ and modules/ read these variables', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const vars = (Object.keys(SETTINGS) as SettingName[]).map((n) => SETTINGS[n].env);
    const direct = new RegExp(`process\\.env(\\.(${vars.join('|')})\\b|\\[['"](${vars.join('|')})['"]\\])`);
    const offenders: string[] = [];
    for (const dir of ['src', 'modules']) {
      for (const f of readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })) {
        if (!f.endsWith('.ts')) continue;
        const lines = readFileSync(path.join(root, dir, f), 'utf8').split('\n');
        lines.forEach((l, i) => {
          if (direct.test(l)) offenders.push(`${dir}/${f}:${i + 1}: ${l.trim()}`);
        });
      }
    }
    expect(offenders).toEqual([]);
  });

  it('a bad value stops the CLI before any command runs: exit 1 naming the variable, no stack trace', async () => {
    const r = await kplay(['validate', 'no-such-playbook.yml'], { env: { KPLAY_OUTAGE_SECONDS: 'soon' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("ERROR: environment variable KPLAY_OUTAGE_SECONDS='soon' is not valid: use a number at least 0\n");
    expect(r.stdout).toBe('');
  });
});
