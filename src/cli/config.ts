/**
 * `kplay config dump [--only-changed]`: every setting with its value and where it came from, as
 * `ansible-config dump` prints them (`DEFAULT_ROLES_PATH(/work/ansible.cfg) = ['/work/roles']`):
 * ansible-core's name for the settings Ansible has, the variable's name for kplay's own; sorted by
 * name, after `CONFIG_FILE() = <the ansible.cfg read>`.
 */
import { ansibleCfg } from '../core/ansible-config.js';
import { EXIT, type ExitCode } from '../core/exit.js';
import { settingSource } from '../core/settings.js';
import { SETTINGS, type SettingName } from '../core/settings-table.js';
import { reportError } from './common.js';

/** A value as Python's `str()` prints it (ansible-config's `%s`): lists as `['a', 'b']`, booleans as `True`/`False`, nothing as `None`. */
export function pyDisplay(v: unknown, nested = false): string {
  if (v === undefined || v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return `[${v.map((x) => pyDisplay(x, true)).join(', ')}]`;
  if (typeof v === 'string') return nested ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : v;
  return String(v);
}

/** The lines of `kplay config dump`. */
export function configDump(onlyChanged: boolean, env: Readonly<Record<string, string | undefined>> = process.env, cwd = process.cwd()): string[] {
  const rows: [string, string][] = [];
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const s = SETTINGS[name];
    const { value, origin } = settingSource(name, env, cwd);
    if (onlyChanged && origin === 'default') continue;
    const label = s.ansible?.name ?? s.env;
    rows.push([label, `${label}(${origin}) = ${pyDisplay(value)}`]);
  }
  rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return [`CONFIG_FILE() = ${ansibleCfg(env, cwd).file ?? 'None'}`, ...rows.map((r) => r[1])];
}

/** `kplay config dump`: print {@link configDump}. */
export function configCommand(flags: { onlyChanged?: boolean }): ExitCode {
  try {
    process.stdout.write(`${configDump(flags.onlyChanged === true).join('\n')}\n`);
    return EXIT.ok;
  } catch (e) {
    return reportError(e);
  }
}
