/**
 * ansible.cfg as ansible-core reads it: which file (`ANSIBLE_CONFIG`, `./ansible.cfg` unless the
 * working directory is world-writable, `~/.ansible.cfg`, `/etc/ansible/ansible.cfg`; the first
 * that exists wins, none are merged) and its INI text as Python's `configparser` parses it with
 * ansible-core's options (`inline_comment_prefixes=(';',)`, values read raw: no `%(x)s`
 * interpolation). The settings (./settings.ts, table in ./settings-table.ts) read values from it.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Environment variables as a map. */
type Env = Readonly<Record<string, string | undefined>>;

/** A parsed INI file: section → key (lower case) → raw value; `DEFAULT`'s keys apply to every section. */
export type IniSections = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** A malformed ansible.cfg: the message names the file and line, as configparser's errors do. */
export class IniError extends Error {
  override name = 'IniError';
}

/** The ansible.cfg in use: its path (or none) and why a `./ansible.cfg` was passed over. */
export interface AnsibleCfg {
  /** The file read, absolute; undefined when there is none. */
  file: string | undefined;
  /** Its sections (empty when there is no file). */
  sections: IniSections;
  /** ansible-core's warning when the working directory's ansible.cfg was skipped. */
  warning?: string;
}

/** Python's `os.path.normpath`: `.`/`..` resolved, no trailing `/`. */
export function normpath(p: string): string {
  const n = path.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

/** `~` and `$VAR` expanded, then made absolute against `base` (a file's directory when `base` is a file), as ansible-core's `unfrackpath`. */
export function unfrackPath(p: string, base: string, env: Env = process.env): string {
  const home = env.HOME || os.homedir();
  let out = p.replace(/\$(\w+)|\$\{(\w+)\}/g, (m, a: string | undefined, b: string | undefined) => env[(a ?? b) as string] ?? m);
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  let dir = base;
  try {
    if (statSync(base).isFile()) dir = path.dirname(base);
  } catch {
    // a base that does not exist is used as a directory
  }
  return normpath(path.isAbsolute(out) ? out : path.join(dir, out));
}

function readable(p: string): boolean {
  try {
    accessSync(p, constants.R_OK);
    return existsSync(p);
  } catch {
    return false;
  }
}

/** The ansible.cfg ansible-core would read in `cwd` with `env` (its `find_ini_config_file`). */
export function findAnsibleCfg(env: Env = process.env, cwd = process.cwd()): { file: string | undefined; warning?: string } {
  const candidates: string[] = [];
  const fromEnv = env.ANSIBLE_CONFIG;
  let envPath: string | undefined;
  if (fromEnv !== undefined) {
    envPath = unfrackPath(fromEnv, cwd, env);
    try {
      if (statSync(envPath).isDirectory()) envPath = path.join(envPath, 'ansible.cfg');
    } catch {
      // not there: tried as it is, and skipped
    }
    candidates.push(envPath);
  }
  let skippedCwd = false;
  const cwdCfg = path.join(cwd, 'ansible.cfg');
  try {
    // a world-writable working directory is not trusted as a source of configuration
    if (statSync(cwd).mode & 0o002) skippedCwd = existsSync(cwdCfg);
    else candidates.push(cwdCfg);
  } catch {
    // a working directory that cannot be read is no source
  }
  candidates.push(unfrackPath('~/.ansible.cfg', cwd, env), '/etc/ansible/ansible.cfg');
  const file = candidates.find(readable);
  const warning =
    skippedCwd && file !== envPath
      ? `Ansible is being run in a world writable directory (${cwd}), ignoring it as an ansible.cfg source. For more information see https://docs.ansible.com/ansible/devel/reference_appendices/config.html#cfg-in-world-writable-dir`
      : undefined;
  return { file, ...(warning ? { warning } : {}) };
}

/** Cut an inline `;` comment (one preceded by whitespace), as `inline_comment_prefixes=(';',)` does. */
function cutInlineComment(v: string): string {
  const m = /\s;/.exec(v);
  return m ? v.slice(0, m.index) : v;
}

/**
 * Parse INI text as Python's `configparser.ConfigParser(inline_comment_prefixes=(';',))` does:
 * `[section]` headers, `key = value` or `key: value` (the first `=` or `:`), keys in lower case,
 * whole-line `#` and `;` comments, inline `;` comments after whitespace, indented continuation lines
 * (joined with newlines; blank lines inside kept, trailing ones dropped). Duplicate sections or keys,
 * a key before any section, and a line with no `=`/`:` are errors, as there.
 * @throws IniError naming `file` and the line.
 */
export function parseIni(text: string, file: string): IniSections {
  const sections = new Map<string, Map<string, string>>();
  let cur: Map<string, string> | undefined;
  let curName = '';
  let last: { key: string; indent: number; lines: string[] } | undefined;
  const finish = (): void => {
    if (!last || !cur) return;
    while (last.lines.length > 1 && last.lines[last.lines.length - 1] === '') last.lines.pop();
    cur.set(last.key, last.lines.join('\n'));
    last = undefined;
  };
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  lines.forEach((raw, i) => {
    const at = `${file}:${i + 1}`;
    const stripped = raw.trim();
    if (/^[#;]/.test(stripped)) return;
    const value = cutInlineComment(raw).trim();
    const indent = raw.length - raw.trimStart().length;
    if (value === '') {
      // a blank line inside a value is kept (configparser's empty_lines_in_values)
      if (last) last.lines.push('');
      return;
    }
    if (last && indent > last.indent) {
      last.lines.push(value);
      return;
    }
    finish();
    const header = /^\[(.*)\]$/.exec(value);
    if (header) {
      curName = header[1] as string;
      if (sections.has(curName)) throw new IniError(`While reading from '${file}' [line ${i + 1}]: section '${curName}' already exists`);
      cur = new Map();
      sections.set(curName, cur);
      return;
    }
    if (!cur) throw new IniError(`File contains no section headers.\nfile: '${file}', line: ${i + 1}\n${JSON.stringify(raw)} (${at})`);
    const m = /^(.*?)\s*[=:]\s*(.*)$/.exec(value);
    if (!m || (m[1] as string).trim() === '') throw new IniError(`Source contains parsing errors: '${file}'\n\t[line ${i + 1}]: ${JSON.stringify(raw)}`);
    const key = (m[1] as string).trim().toLowerCase();
    if (cur.has(key)) throw new IniError(`While reading from '${file}' [line ${i + 1}]: option '${key}' in section '${curName}' already exists`);
    last = { key, indent, lines: [m[2] as string] };
  });
  finish();
  return sections;
}

/** The raw value of `section`/`key` (falling back to `[DEFAULT]`), if set. */
export function iniValue(sections: IniSections, section: string, key: string): string | undefined {
  return sections.get(section)?.get(key) ?? sections.get('DEFAULT')?.get(key);
}

/** Surrounding matching quotes removed, as ansible-core's `unquote` does to an ini value. */
export function unquote(v: string): string {
  return v.length >= 2 && (v[0] === '"' || v[0] === "'") && v[v.length - 1] === v[0] ? v.slice(1, -1) : v;
}

const cache = new Map<string, AnsibleCfg>();

/**
 * The ansible.cfg of `env` and `cwd`, read and parsed once per file and content.
 * @throws IniError when the file is not valid INI.
 */
export function ansibleCfg(env: Env = process.env, cwd = process.cwd()): AnsibleCfg {
  const found = findAnsibleCfg(env, cwd);
  if (!found.file) return { file: undefined, sections: new Map(), ...(found.warning ? { warning: found.warning } : {}) };
  const text = readFileSync(found.file, 'utf8');
  const key = `${found.file}\0${text}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = { file: found.file, sections: parseIni(text, found.file) };
    cache.set(key, hit);
  }
  return found.warning ? { ...hit, warning: found.warning } : hit;
}
