/**
 * Reading kplay's settings (the table: ./settings-table.ts): from kplay's own variable, then for a
 * setting Ansible has too its `ANSIBLE_*` variable and the ansible.cfg ansible-core would read
 * (./ansible-config.ts), then the default.
 *
 * Read a setting with {@link setting}: it parses the variable once per value and throws a
 * {@link SettingError} naming the variable when the value is bad. The CLI calls
 * {@link checkSettings} before any command runs, so a bad value is exit 1 before anything ran.
 */
import os from 'node:os';
import path from 'node:path';
import { ansibleCfg, iniValue, unquote, IniError, type AnsibleCfg } from './ansible-config.js';
import { SettingError, type Env, type SettingSpec } from './setting-spec.js';
import { SETTINGS, type SettingName, type SettingValue } from './settings-table.js';

const parsed = new Map<string, unknown>();

/** Where a setting's value came from: `default`, `env: VAR`, or the ansible.cfg file's path (as `ansible-config dump` says). */
export type SettingOrigin = 'default' | `env: ${string}` | string;

/** A setting's value and its origin. */
export interface SettingSource<T> {
  /** The value. */
  value: T;
  /** Where it came from. */
  origin: SettingOrigin;
}

/** Parse `raw` with `parse` (once per setting, origin and value), naming `where` in the error. */
function parseOnce<T>(name: string, origin: string, raw: string, where: { variable: string; label: string }, parse: (raw: string) => T): T {
  const key = `${name}\0${origin}\0${raw}`;
  if (parsed.has(key)) return parsed.get(key) as T;
  let value: T;
  try {
    value = parse(raw);
  } catch (e) {
    const accepted = e instanceof Error ? e.message : String(e);
    throw new SettingError(where.variable, `${where.label}='${raw}' is not valid: ${accepted}`);
  }
  parsed.set(key, value);
  return value;
}

/**
 * The value of a setting from `env` (default `process.env`) and where it came from. Precedence,
 * highest first: kplay's own variable (`KPLAY_*`), then for a setting Ansible has too its
 * `ANSIBLE_*` variable, then the ansible.cfg ansible-core would read (see ./ansible-config.ts), then
 * the default (Ansible's, for those). A command-line flag wins over all of these; its caller applies it.
 * An empty `ANSIBLE_*` variable of a number or boolean gives the default, as in ansible-core.
 * @throws SettingError naming the variable or ansible.cfg key when its value is not accepted.
 */
export function settingSource<K extends SettingName>(name: K, env: Env = process.env, cwd = process.cwd()): SettingSource<SettingValue<K>> {
  const s: SettingSpec<SettingValue<K>> = SETTINGS[name];
  const raw = env[s.env];
  const a = s.ansible;
  if (raw !== undefined && !(a && s.env === a.env)) return { value: parseOnce(name, `env: ${s.env}`, raw, { variable: s.env, label: `environment variable ${s.env}` }, s.parse), origin: `env: ${s.env}` };
  if (!a) return { value: s.default, origin: 'default' };
  const fromEnv = env[a.env];
  if (fromEnv !== undefined && !(fromEnv === '' && typeof s.default !== 'string' && !Array.isArray(s.default))) {
    // a setting read from Ansible's own variable parses it as it always did; ansible.cfg text as ansible-core does
    const parse = s.env === a.env ? s.parse : (r: string): SettingValue<K> => a.parse(r, cwd, env);
    return { value: parseOnce(name, `env: ${a.env}`, fromEnv, { variable: a.env, label: `environment variable ${a.env}` }, parse), origin: `env: ${a.env}` };
  }
  let cfg: AnsibleCfg;
  try {
    cfg = ansibleCfg(env, cwd);
  } catch (e) {
    if (e instanceof IniError) throw new SettingError('ANSIBLE_CONFIG', `${e.message}; fix the file or point ANSIBLE_CONFIG at another`);
    throw e;
  }
  const fromCfg = cfg.file ? iniValue(cfg.sections, a.ini[0], a.ini[1]) : undefined;
  if (cfg.file && fromCfg !== undefined) {
    const where = { variable: a.env, label: `${a.ini[1]} (section [${a.ini[0]}] of ${cfg.file})` };
    return { value: parseOnce(name, cfg.file, fromCfg, where, (r) => a.parse(Array.isArray(s.default) ? r : unquote(r), cfg.file as string, env)), origin: cfg.file };
  }
  return { value: a.default ? a.default(env) : s.default, origin: 'default' };
}

/**
 * The value of a setting (see {@link settingSource} for where it is read from, in which order).
 * @throws SettingError naming the variable when its value is not accepted.
 * @example const dir = setting('recordDir'); // $KPLAY_RECORD_DIR or '.kplay/runs'
 */
export function setting<K extends SettingName>(name: K, env: Env = process.env): SettingValue<K> {
  return settingSource(name, env).value;
}

/** The warning ansible-core gives when it skips `./ansible.cfg` of a world-writable working directory, if it does. */
export function ansibleCfgWarning(env: Env = process.env, cwd = process.cwd()): string | undefined {
  return ansibleCfg(env, cwd).warning;
}

/**
 * Parse every setting of `env` (default `process.env`) once; the CLI calls it before a command
 * runs, so a bad value stops kplay before anything ran.
 * @throws SettingError naming the first variable whose value is not accepted.
 */
export function checkSettings(env: Env = process.env): void {
  for (const name of Object.keys(SETTINGS) as SettingName[]) setting(name, env);
}

/**
 * kplay's directory for caches and locks: `$XDG_CACHE_HOME/kplay` (default `~/.cache/kplay`).
 * @example kplayCacheDir() // '/home/ops/.cache/kplay'
 */
export function kplayCacheDir(env: Env = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache'), 'kplay');
}
