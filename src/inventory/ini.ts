/**
 * Ansible's INI inventory format, read as ansible-core's `ini` inventory plugin does, into the
 * shape of a YAML inventory document (group → `hosts` / `vars` / `children`) for the builder:
 *
 * ```ini
 * host0 ansible_host=10.0.0.1        # before any section: ungrouped
 * [web]
 * web[01:03].example.com http_port=80
 * [web:vars]
 * tier=front
 * [prod:children]
 * web
 * ```
 *
 * Host lines are split like a shell (`shlex`, `#` starts a comment), values are Python literals
 * when they parse as one (`8080`, `True`, `"x y"`, `[1, 2]`), else strings. A `[g:vars]` section
 * for a group never defined, or a `[g:children]` naming a group never defined, is an error, as
 * are unknown section types and malformed lines (all with file:line).
 */
import { withoutBom } from '../load/bom.js';
import { InputError, type SourcePos } from '../load/errors.js';
import { NAME_PATTERN } from './schema.js';
import { parseIniValue } from './pyliteral.js';

type Vars = Record<string, unknown>;

/** A group as read from INI (same keys as a YAML inventory group). */
interface IniGroup {
  hosts: Record<string, Vars | null>;
  vars: Vars;
  children: Record<string, null>;
}

const SECTION_RE = /^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$/;
const GROUP_NAME_RE = /^([^:\]\s]+)\s*(?:#.*)?$/;
const NAME_RE = new RegExp(NAME_PATTERN);

/** Set `key` on `obj` even when it is `__proto__` (an own property, never the prototype). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Split a line as Python's `shlex.split(line, comments=True)` does (POSIX mode). */
export function shlexSplit(line: string): string[] {
  const out: string[] = [];
  let cur: string | undefined;
  let i = 0;
  while (i < line.length) {
    const ch = line[i] as string;
    if (/\s/.test(ch)) {
      if (cur !== undefined) out.push(cur);
      cur = undefined;
      i++;
    } else if (ch === '#') {
      break;
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('No closing quotation');
      cur = (cur ?? '') + line.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      let j = i + 1;
      let s = '';
      for (;;) {
        if (j >= line.length) throw new Error('No closing quotation');
        const c = line[j] as string;
        if (c === '"') break;
        if (c === '\\' && (line[j + 1] === '"' || line[j + 1] === '\\' || line[j + 1] === '$' || line[j + 1] === '`')) {
          s += line[j + 1];
          j += 2;
          continue;
        }
        s += c;
        j++;
      }
      cur = (cur ?? '') + s;
      i = j + 1;
    } else if (ch === '\\') {
      if (i + 1 >= line.length) throw new Error('No escaped character');
      cur = (cur ?? '') + line[i + 1];
      i += 2;
    } else {
      cur = (cur ?? '') + ch;
      i++;
    }
  }
  if (cur !== undefined) out.push(cur);
  return out;
}

/** Parse an INI inventory; returns a YAML-inventory-shaped document (top-level groups). */
export function parseIniInventory(text: string, file: string): Record<string, IniGroup> {
  const groups = new Map<string, IniGroup>();
  const group = (name: string): IniGroup => {
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { hosts: {}, vars: {}, children: {} }));
    return g;
  };
  // hosts before any section, and [ungrouped] / [all] hosts, are hosts of all (ungrouped unless in a group)
  const target = (name: string): string => (name === 'ungrouped' ? 'all' : name);
  const defined = new Set<string>(['all', 'ungrouped']);
  const pendingVars = new Map<string, number>();
  const pendingChildren = new Map<string, { line: number; parent: string }>();
  let current = 'all';
  let state: 'hosts' | 'vars' | 'children' = 'hosts';
  const lines = withoutBom(text).split(/\r?\n/);
  for (const [idx, raw] of lines.entries()) {
    const lineNo = idx + 1;
    const at: SourcePos = { file, line: lineNo, col: 1 };
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = SECTION_RE.exec(line);
    if (sec) {
      const name = sec[1] as string;
      const kind = sec[2] ?? 'hosts';
      if (kind !== 'hosts' && kind !== 'vars' && kind !== 'children') {
        throw new InputError(`section [${name}:${kind}] has unknown type: ${kind}`, at, 'sections are [group], [group:vars] and [group:children]');
      }
      if (!NAME_RE.test(name)) throw new InputError(`invalid group name '${name}'`, at, 'names may only contain letters, digits, _, . and -');
      current = name;
      state = kind;
      if (kind === 'vars') {
        if (!defined.has(name) && !pendingVars.has(name)) pendingVars.set(name, lineNo);
      } else {
        defined.add(name);
        pendingVars.delete(name);
        pendingChildren.delete(name);
      }
      group(target(name));
      continue;
    }
    if (line.startsWith('[') && line.endsWith(']')) {
      throw new InputError(`invalid section entry: '${line}'`, at, 'make sure there are no spaces and no other invalid characters in the section entry');
    }
    if (state === 'vars') {
      const eq = line.indexOf('=');
      if (eq < 0) throw new InputError(`expected key=value, got: ${line}`, at);
      setOwn(group(target(current)).vars, line.slice(0, eq).trim(), parseIniValue(line.slice(eq + 1).trim()));
    } else if (state === 'children') {
      const m = GROUP_NAME_RE.exec(line);
      if (!m) throw new InputError(`'${line}' is not a valid group name`, at);
      const child = m[1] as string;
      if (!NAME_RE.test(child)) throw new InputError(`invalid group name '${child}'`, at, 'names may only contain letters, digits, _, . and -');
      if (child === 'all' || child === 'ungrouped') throw new InputError(`'${child}' cannot be a child group: it is built in`, at);
      if (!defined.has(child) && !pendingChildren.has(child)) pendingChildren.set(child, { line: lineNo, parent: current });
      setOwn(group(target(current)).children, child, null);
    } else {
      let tokens: string[];
      try {
        tokens = shlexSplit(line);
      } catch (e) {
        throw new InputError(`error parsing host definition '${line}': ${e instanceof Error ? e.message : String(e)}`, at);
      }
      const [host, ...assignments] = tokens;
      if (host === undefined) continue;
      if (host.endsWith(':') ) throw new InputError(`invalid host pattern '${host}': ending in ':' is not allowed, this character is reserved to provide a port`, at);
      if (host === '---') throw new InputError("invalid host pattern '---': '---' is normally a sign this is a YAML file", at);
      const vars: Vars = {};
      for (const t of assignments) {
        const eq = t.indexOf('=');
        if (eq < 0) throw new InputError(`expected key=value host variable assignment, got: ${t}`, at);
        setOwn(vars, t.slice(0, eq), parseIniValue(t.slice(eq + 1)));
      }
      const hosts = group(target(current)).hosts;
      const merged: Vars = {};
      for (const [k, v] of [...Object.entries(Object.hasOwn(hosts, host) ? (hosts[host] ?? {}) : {}), ...Object.entries(vars)]) setOwn(merged, k, v);
      setOwn(hosts, host, merged);
    }
  }
  for (const [name, line] of pendingVars) {
    if (!defined.has(name)) throw new InputError(`section [${name}:vars] not valid for undefined group '${name}'`, { file, line, col: 1 }, `add a [${name}] or [${name}:children] section`);
  }
  for (const [name, p] of pendingChildren) {
    if (!defined.has(name)) throw new InputError(`section [${p.parent}:children] includes undefined group '${name}'`, { file, line: p.line, col: 1 }, `add a [${name}] section (it may be empty)`);
  }
  return Object.fromEntries(groups);
}
