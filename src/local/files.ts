/**
 * File attributes as Ansible's file-handling modules (`file`, `copy`, `template`, `tempfile`,
 * `stat`, `get_url`) report and set them: octal and symbolic modes, owner and group by name or id
 * (from /etc/passwd and /etc/group, as Python's pwd/grp), checksums (SHA-1, MD5).
 */
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, readFileSync, statSync, type Stats } from 'node:fs';

/** A `mode` argument: an octal string (`'0644'`, `'644'`), a symbolic one (`'u=rw,g=r'`), or a number (YAML `0644` is 420). */
export type ModeArg = string | number;

/** Owner, group and mode wanted for a path (each optional). */
export interface WantedAttrs {
  mode?: ModeArg;
  owner?: string;
  group?: string;
}

function idTable(file: string): { byName: Map<string, number>; byId: Map<number, string> } {
  const byName = new Map<string, number>();
  const byId = new Map<number, string>();
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // no such database: ids stay numeric
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    const name = f[0];
    const id = Number(f[2]);
    if (!name || !Number.isInteger(id)) continue;
    if (!byName.has(name)) byName.set(name, id);
    if (!byId.has(id)) byId.set(id, name);
  }
  return { byName, byId };
}

/** User name of a uid (the uid as text when it has none, as Ansible). */
export function userName(uid: number): string {
  return idTable('/etc/passwd').byId.get(uid) ?? String(uid);
}

/** Group name of a gid (the gid as text when it has none, as Ansible). */
export function groupName(gid: number): string {
  return idTable('/etc/group').byId.get(gid) ?? String(gid);
}

/** The uid of a user name or number. @throws Error when there is no such user. */
export function uidOf(owner: string): number {
  if (/^\d+$/.test(owner)) return Number(owner);
  const id = idTable('/etc/passwd').byName.get(owner);
  if (id === undefined) throw new Error(`chown failed: failed to look up user ${owner}`);
  return id;
}

/** The gid of a group name or number. @throws Error when there is no such group. */
export function gidOf(group: string): number {
  if (/^\d+$/.test(group)) return Number(group);
  const id = idTable('/etc/group').byName.get(group);
  if (id === undefined) throw new Error(`chgrp failed: failed to look up group ${group}`);
  return id;
}

/** `'0644'`: permission bits (with setuid/setgid/sticky) as Ansible prints them. */
export function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

const WHO: Record<string, number> = { u: 0o4700, g: 0o2070, o: 0o1007 };

/**
 * The permission bits a `mode` argument asks for, given the current ones (symbolic modes are
 * relative). As Ansible: a number is the mode itself; a string of octal digits is octal; else
 * `[ugoa]*[-+=][rwxXstugo]*` clauses separated by commas.
 * @throws Error with Ansible's message when the mode is invalid.
 */
export function wantedMode(mode: ModeArg, current: number, isDir: boolean): number {
  if (typeof mode === 'number') return mode & 0o7777;
  if (/^[0-7]+$/.test(mode)) return parseInt(mode, 8) & 0o7777;
  let bits = current & 0o7777;
  for (const clause of mode.split(',')) {
    const m = /^([ugoa]*)([-+=])([rwxXstugo]*)$/.exec(clause);
    if (!m) throw new Error(`mode must be in octal or symbolic form: bad symbolic permission for mode: ${mode}`);
    const users = (m[1] || 'a').replace('a', 'ugo');
    const op = m[2] as string;
    const perms = m[3] as string;
    for (const u of new Set(users)) {
      const mask = WHO[u] as number;
      let add = 0;
      for (const p of perms) {
        if (p === 'r') add |= 0o444;
        else if (p === 'w') add |= 0o222;
        else if (p === 'x') add |= 0o111;
        else if (p === 'X') add |= isDir || (current & 0o111) !== 0 ? 0o111 : 0;
        else if (p === 's') add |= 0o6000;
        else if (p === 't') add |= 0o1000;
        else {
          // copy another class's bits: u/g/o
          const shift = p === 'u' ? 6 : p === 'g' ? 3 : 0;
          const v = (current >> shift) & 7;
          add |= (v << 6) | (v << 3) | v;
        }
      }
      add &= mask;
      if (op === '+') bits |= add;
      else if (op === '-') bits &= ~add;
      else bits = (bits & ~mask) | add;
    }
  }
  return bits & 0o7777;
}

/** What {@link applyAttrs} changed (each before → after), for the diff. */
export interface AttrChange {
  changed: boolean;
  before: Record<string, string | number>;
  after: Record<string, string | number>;
}

/**
 * Set mode, owner and group of `path` when they differ (in check mode only report). `follow`
 * false acts on a symlink itself (its mode cannot be changed: as Ansible on Linux, skipped).
 * @throws Error when a user/group does not exist or the change is not permitted.
 */
export function applyAttrs(path: string, want: WantedAttrs, check: boolean, follow = true): AttrChange {
  const out: AttrChange = { changed: false, before: {}, after: {} };
  if (!existsSync(path) && !lexists(path)) return out;
  const st = follow ? statSync(path) : lstatSync(path);
  if (want.owner !== undefined || want.group !== undefined) {
    const uid = want.owner !== undefined ? uidOf(want.owner) : st.uid;
    const gid = want.group !== undefined ? gidOf(want.group) : st.gid;
    if (uid !== st.uid) {
      out.before.owner = st.uid;
      out.after.owner = uid;
    }
    if (gid !== st.gid) {
      out.before.group = st.gid;
      out.after.group = gid;
    }
    if ((uid !== st.uid || gid !== st.gid) && !check) {
      try {
        (follow ? chownSync : lchownSync)(path, uid, gid);
      } catch (e) {
        throw new Error(`chown failed: ${(e as Error).message}`);
      }
    }
    if (uid !== st.uid || gid !== st.gid) out.changed = true;
  }
  if (want.mode !== undefined && !(st.isSymbolicLink() && !follow)) {
    const now = st.mode & 0o7777;
    const next = wantedMode(want.mode, now, st.isDirectory());
    if (next !== now) {
      out.before.mode = octal(now);
      out.after.mode = octal(next);
      out.changed = true;
      if (!check) chmodSync(path, next);
    }
  }
  return out;
}

/** Whether a path exists, a dangling symlink included. */
export function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The state Ansible's `file` module reports for what is at a path. */
export function fileState(path: string): 'absent' | 'directory' | 'link' | 'hard' | 'file' {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return 'absent';
  }
  if (st.isSymbolicLink()) return 'link';
  if (st.isDirectory()) return 'directory';
  if (st.nlink > 1) return 'hard';
  return 'file';
}

/** The attributes Ansible adds to a file module's result (`add_path_info`): uid, gid, owner, group, mode, state, size. */
export interface PathInfo {
  uid: number;
  gid: number;
  owner: string;
  group: string;
  mode: string;
  state: 'directory' | 'link' | 'hard' | 'file' | 'absent';
  size: number;
}

/** {@link PathInfo} of a path as ansible's `add_path_info` computes it (`state: absent` when it does not exist). */
export function pathInfo(path: string): PathInfo | { state: 'absent' } {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return { state: 'absent' };
  }
  const state = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'directory' : st.nlink > 1 ? 'hard' : 'file';
  // ansible reports the target's attributes for a link (os.stat), the link's size (lstat)
  let target: Stats = st;
  if (st.isSymbolicLink()) {
    try {
      target = statSync(path);
    } catch {
      target = st;
    }
  }
  return { uid: target.uid, gid: target.gid, owner: userName(target.uid), group: groupName(target.gid), mode: octal(st.isSymbolicLink() ? 0o777 : target.mode), state, size: st.size };
}

/** SHA-1 (hex) of a file's bytes, as Ansible's `checksum`. */
export function sha1File(path: string): string {
  return createHash('sha1').update(readFileSync(path)).digest('hex');
}

/** Hex digest of bytes with a hash algorithm Node knows (`sha1`, `sha256`, `md5`…). */
export function digest(data: Buffer | string, algorithm: string): string {
  return createHash(algorithm).update(data).digest('hex');
}
