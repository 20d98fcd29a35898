/**
 * Paths on the machine running kplay, as Ansible's modules see them under `connection: local`:
 * `type='path'` arguments have `~` and `$VARS` expanded, a relative path is relative to the working
 * directory kplay was started in (the module's cwd under ansible-playbook), and `creates`/`removes`
 * are globs.
 */
import { readdirSync } from 'node:fs';
import type { ModuleContext } from '../core/module.js';
import os from 'node:os';
import path from 'node:path';
import { lexists } from './files.js';

/** Python's `os.path.expandvars(os.path.expanduser(p))`: `~`, `~user` (the current user only), `$VAR`, `${VAR}` (unset ones stay). */
export function expandUserVars(p: string, env: Record<string, string | undefined> = process.env): string {
  let out = p;
  if (out === '~' || out.startsWith('~/')) out = os.homedir() + out.slice(1);
  else if (out.startsWith(`~${os.userInfo().username}`) && /^~[^/]*(\/|$)/.test(out)) out = os.homedir() + out.slice(os.userInfo().username.length + 1);
  return out.replace(/\$(\w+|\{[^}]*\})/g, (m: string, name: string) => {
    const key = name.startsWith('{') ? name.slice(1, -1) : name;
    const v = env[key];
    return v === undefined ? m : v;
  });
}

/** An absolute path for a `type='path'` argument: expanded, relative to the working directory. */
export function localPath(p: string): string {
  return path.resolve(process.cwd(), expandUserVars(p));
}

/** A glob segment as a regular expression (`*`, `?`, `[…]`; a leading `.` must be matched literally, as Python's glob). */
function segmentRegex(seg: string): RegExp {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] as string;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = seg.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether Python's `glob.glob(pattern)` would find anything (a literal path: whether it exists, a dangling link included). */
export function globExists(pattern: string): boolean {
  if (!/[*?[]/.test(pattern)) return lexists(pattern);
  const abs = path.resolve(pattern);
  const segs = abs.split('/').filter(Boolean);
  const walk = (dir: string, i: number): boolean => {
    if (i === segs.length) return true;
    const seg = segs[i] as string;
    if (!/[*?[]/.test(seg)) {
      const next = path.join(dir, seg);
      return lexists(next) && walk(next, i + 1);
    }
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return false;
    }
    const re = segmentRegex(seg);
    return names.some((n) => (!n.startsWith('.') || seg.startsWith('.')) && re.test(n) && walk(path.join(dir, n), i + 1));
  };
  return walk('/', 0);
}

/**
 * A controller-side source file (`copy`/`uri` `src`, `template` `src`) as Ansible searches for it:
 * for each directory of the task's search path (its role, its file's directory, the playbook's),
 * its `files/` (or `templates/`) then itself ({@link ModuleContext.findFile}). Returns the last
 * candidate when none exists.
 */
export function findSource(ctx: Pick<ModuleContext, 'findFile'>, rel: string, kind: 'files' | 'templates'): string {
  return path.isAbsolute(rel) ? rel : ctx.findFile(rel, kind);
}
