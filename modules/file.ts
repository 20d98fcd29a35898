/**
 * `file`: manage a path on the machine running kplay (directory, file attributes, symlink, hard
 * link, touch, absent), as ansible.builtin.file does under `connection: local`.
 */
import { closeSync, existsSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { applyAttrs, applyAttrsRecursive, attrDiff, defineModule, fileState, gidOf, localPath, pathInfo, uidOf, Default, StringEnum, Type, type DiffEntry, type ModuleContext, type ModuleResult, type WantedAttrs, PathAttrsResult } from 'kplay/sdk';

const STATES = ['absent', 'directory', 'file', 'hard', 'link', 'touch'] as const;
type State = (typeof STATES)[number];

/** `strptime` with the directives Ansible's default formats use (%Y %m %d %H %M %S, literal text). */
function parseTime(value: string, format: string): number {
  let re = '';
  const order: string[] = [];
  for (let i = 0; i < format.length; i++) {
    const c = format[i] as string;
    if (c === '%' && i + 1 < format.length) {
      const d = format[++i] as string;
      if (!'YmdHMS'.includes(d)) throw new Error(`modification_time_format/access_time_format: %${d} is not supported by kplay (use %Y %m %d %H %M %S)`);
      re += d === 'Y' ? '(\\d{4})' : '(\\d{1,2})';
      order.push(d);
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  const m = new RegExp(`^${re}$`).exec(value);
  if (!m) throw new Error(`Error while obtaining timestamp for time ${value} using format ${format}: time data '${value}' does not match format '${format}'`);
  const part = (d: string, dflt: number): number => {
    const i = order.indexOf(d);
    return i < 0 ? dflt : Number(m[i + 1]);
  };
  return new Date(part('Y', 1900), part('m', 1) - 1, part('d', 1), part('H', 0), part('M', 0), part('S', 0)).getTime() / 1000;
}

export default defineModule({
  name: 'file',
  summary: 'Manage a local path: directory, attributes, symlink, hard link, touch, absent (ansible.builtin.file)',
  description: [
    'Acts on the machine running kplay, as `ansible.builtin.file` with `connection: local`: the same arguments (`path` alias `dest`/`name`), defaults, messages, check mode, diff and result (`path` or `dest`, `state`, `mode`, `uid`, `gid`, `owner`, `group`, `size`). Relative paths are relative to the working directory kplay runs in.',
    'Without `state`: the current state of the path (`file` when it does not exist; `directory` with `recurse`). `touch` always reports changed (it updates the times), as in Ansible.',
  ].join('\n\n'),
  schema: Type.Object(
    {
      path: Type.Optional(Type.String({ description: 'Path to manage (required; aliases `dest`, `name`).', examples: ['/tmp/kplay/work'] })),
      dest: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      name: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      state: Type.Optional(StringEnum(STATES, { description: '`directory` (created with parents), `file` (only attributes; must exist), `link`/`hard` (to `src`), `touch` (create or update times), `absent` (removed, recursively). Default: the current state, `file` when absent.' })),
      src: Type.Optional(Type.String({ description: 'Target of the link (`state: link`/`hard`); a relative symlink target is relative to the link\'s directory.' })),
      recurse: Default(Type.Boolean({ description: 'Set attributes on everything under a directory (`state: directory`).' }), false),
      force: Default(Type.Boolean({ description: 'Links: replace a file or empty directory, or link to a target that does not exist.' }), false),
      follow: Default(Type.Boolean({ description: 'Act on the target of a symlink.' }), true),
      mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions: octal as a string (`"0644"`), a YAML octal number (`0644`), or symbolic (`u=rw,g=r,o=r`, `u+x`).' })),
      owner: Type.Optional(Type.String({ description: 'User (name or uid) to own the path.' })),
      group: Type.Optional(Type.String({ description: 'Group (name or gid) to own the path.' })),
      modification_time: Type.Optional(Type.String({ description: '`now`, `preserve`, or a time in `modification_time_format` (default for `touch`: `now`; else `preserve`).' })),
      modification_time_format: Default(Type.String({ description: 'Format of `modification_time` (strptime; %Y %m %d %H %M %S).' }), '%Y%m%d%H%M.%S'),
      access_time: Type.Optional(Type.String({ description: '`now`, `preserve`, or a time in `access_time_format` (default for `touch`: `now`; else `preserve`).' })),
      access_time_format: Default(Type.String({ description: 'Format of `access_time` (strptime; %Y %m %d %H %M %S).' }), '%Y%m%d%H%M.%S'),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    path: Type.Optional(Type.String({ description: 'The path (for `file`, `directory`, `absent`).' })),
    dest: Type.Optional(Type.String({ description: 'The path (for `link`, `hard`, `touch`).' })),
    src: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The link target (`link`, `hard`).' })),
    state: Type.String({ description: 'What is at the path now: `file`, `directory`, `link`, `hard` or `absent`.' }),
    ...PathAttrsResult,
  }),
  diffMode: 'supported',
  checkMode: 'supported',
  examples: [
    { title: 'A directory with permissions', yaml: '- file:\n    path: /tmp/kplay/render\n    state: directory\n    mode: "0750"' },
    { title: 'A symlink', yaml: '- file:\n    src: /opt/app/releases/{{ version }}\n    dest: /opt/app/current\n    state: link' },
    { title: 'Remove a work directory', yaml: '- file:\n    path: /tmp/kplay/render\n    state: absent' },
  ],
  async run(args, ctx) {
    const given = args.path ?? args.dest ?? args.name;
    if (given === undefined) return { status: 'failed', msg: 'missing required arguments: path' };
    let p = localPath(given);
    const src = args.src === undefined ? undefined : args.src;
    if (args.state !== 'link' && args.state !== 'absent' && existsSync(p) && statSync(p).isDirectory() && src) p = path.join(p, path.basename(src));
    const prev = fileState(p);
    const state: State = args.state ?? (prev !== 'absent' ? prev : args.recurse ? 'directory' : 'file');
    if (args.recurse && state !== 'directory') return { status: 'failed', msg: "recurse option requires state to be 'directory'", data: { path: p, state: prev } };
    if (src && state !== 'link' && state !== 'hard') return { status: 'failed', msg: "src option requires state to be 'link' or 'hard'", data: { path: p, state: prev } };
    const want: WantedAttrs = { mode: args.mode, owner: args.owner, group: args.group };
    try {
      if (ctx.checkMode && state !== 'absent') {
        if (args.owner !== undefined) uidOf(args.owner);
        if (args.group !== undefined) gidOf(args.group);
      }
      const out = run(state, p, src, want, args, ctx);
      return out;
    } catch (e) {
      return { status: 'failed', msg: (e as Error).message, data: { path: p, state: fileState(p) } };
    }
  },
});

interface Times {
  modification_time?: string;
  modification_time_format: string;
  access_time?: string;
  access_time_format: string;
  follow: boolean;
  force: boolean;
  recurse: boolean;
}

type Data = { [k: string]: unknown; state: string };

/** The result with the path's attributes (ansible's add_path_info: `path` or `dest`). */
function finish(changed: boolean, key: 'path' | 'dest', p: string, extra: Record<string, unknown>, diff: DiffEntry | undefined, ctx: ModuleContext): ModuleResult<Data> {
  const data: Data = { [key]: p, ...extra, ...pathInfo(p) };
  return { status: changed ? 'changed' : 'ok', data, ...(changed && diff && ctx.diffMode ? { diff: [diff] } : {}) };
}

/** Set the times (`now`, `preserve` or a formatted time); returns whether they changed. */
function setTimes(p: string, t: Times, state: State, check: boolean, before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  const dflt = state === 'touch' ? 'now' : 'preserve';
  const m = t.modification_time ?? dflt;
  const a = t.access_time ?? dflt;
  if (m === 'preserve' && a === 'preserve') return false;
  if (!existsSync(p)) return false;
  const st = statSync(p);
  const now = Date.now() / 1000;
  const mtime = m === 'preserve' ? st.mtimeMs / 1000 : m === 'now' ? now : parseTime(m, t.modification_time_format);
  const atime = a === 'preserve' ? st.atimeMs / 1000 : a === 'now' ? now : parseTime(a, t.access_time_format);
  if (m !== 'now' && a !== 'now' && Math.abs(mtime - st.mtimeMs / 1000) < 1e-6 && Math.abs(atime - st.atimeMs / 1000) < 1e-6) return false;
  before.mtime = st.mtimeMs / 1000;
  before.atime = st.atimeMs / 1000;
  after.mtime = mtime;
  after.atime = atime;
  if (!check) utimesSync(p, atime, mtime);
  return true;
}

function run(state: State, p0: string, src: string | undefined, want: WantedAttrs, t: Times, ctx: ModuleContext): ModuleResult<Data> {
  let p = p0;
  let prev = fileState(p);
  const check = ctx.checkMode;
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  const diff = (): DiffEntry => attrDiff(p, before, after);
  const attrs = (target: string, follow = true): boolean => {
    const c = applyAttrs(target, want, check, follow);
    Object.assign(before, c.before);
    Object.assign(after, c.after);
    return c.changed;
  };
  if (state === 'absent') {
    if (prev === 'absent') return { status: 'ok', data: { path: p, state: 'absent' } };
    before.state = prev;
    after.state = 'absent';
    if (!check) {
      try {
        if (prev === 'directory') rmSync(p, { recursive: true });
        else unlinkSync(p);
      } catch (e) {
        throw new Error(prev === 'directory' ? `rmtree failed: ${(e as Error).message}` : `Unlinking failed: ${(e as Error).message}`);
      }
    }
    return { status: 'changed', data: { path: p, state: 'absent' }, ...(ctx.diffMode ? { diff: [diff()] } : {}) };
  }
  if (state === 'touch') {
    let changed = false;
    before.state = prev;
    after.state = 'touch';
    if (prev === 'absent') {
      if (check) return { status: 'changed', data: { dest: p, state: 'absent' }, ...(ctx.diffMode ? { diff: [diff()] } : {}) };
      try {
        closeSync(openSync(p, 'w'));
      } catch (e) {
        throw new Error(`Error, could not touch target: ${(e as Error).message}`);
      }
      changed = true;
    }
    changed = attrs(p) || changed;
    changed = setTimes(p, t, state, check, before, after) || changed;
    return finish(changed, 'dest', p, {}, diff(), ctx);
  }
  if (state === 'file') {
    if (prev === 'link' && t.follow) {
      try {
        p = realpathSync(p);
      } catch {
        // a dangling link: reported below as a link
      }
      prev = fileState(p);
    }
    if (prev !== 'file' && prev !== 'hard') throw new Error(`file (${p}) is ${prev}, cannot continue`);
    const changed = attrs(p) || setTimes(p, t, state, check, before, after);
    return finish(changed, 'path', p, {}, diff(), ctx);
  }
  if (state === 'directory') {
    if (t.follow && prev === 'link') {
      try {
        p = realpathSync(p);
        prev = fileState(p);
      } catch {
        // dangling link: fails below
      }
    }
    if (prev === 'absent') {
      before.state = 'absent';
      after.state = 'directory';
      if (check) return { status: 'changed', data: { path: p, state: 'absent' }, ...(ctx.diffMode ? { diff: [diff()] } : {}) };
      let cur = '';
      try {
        for (const part of p.split('/').filter(Boolean)) {
          cur = `${cur}/${part}`;
          if (!existsSync(cur)) {
            mkdirSync(cur);
            attrs(cur);
          }
        }
      } catch (e) {
        throw new Error(`There was an issue creating ${cur} as requested: ${(e as Error).message}`);
      }
      setTimes(p, t, state, check, before, after);
      return finish(true, 'path', p, {}, diff(), ctx);
    }
    if (prev !== 'directory') throw new Error(`${p} already exists as a ${prev}`);
    let changed = attrs(p);
    changed = setTimes(p, t, state, check, before, after) || changed;
    if (t.recurse) changed = applyAttrsRecursive(p, want, check) || changed;
    return finish(changed, 'path', p, {}, diff(), ctx);
  }
  if (state === 'link') return link(p, prev, src, want, t, ctx, before, after, attrs);
  return hard(p, prev, src, t, ctx, before, after, attrs);
}

function link(p: string, prev: string, src0: string | undefined, _want: WantedAttrs, t: Times, ctx: ModuleContext, before: Record<string, unknown>, after: Record<string, unknown>, attrs: (target: string, follow?: boolean) => boolean): ModuleResult<Data> {
  let src = src0;
  if (src === undefined && t.follow && existsSync(p) && prev === 'link') src = readlinkSync(p);
  const base = prev !== 'link' && prev === 'directory' ? p : path.dirname(p);
  const absrc = src === undefined ? undefined : path.resolve(base, src);
  if (!t.force && absrc !== undefined && !existsSync(absrc)) throw new Error(`src file does not exist, use 'force=yes' if you really want to create the link: ${absrc}`);
  if (prev === 'directory') {
    if (!t.force) throw new Error(`refusing to convert from directory to symlink for ${p}`);
    if (readdirSync(p).length) throw new Error(`the directory ${p} is not empty, refusing to convert it`);
  } else if ((prev === 'file' || prev === 'hard') && !t.force) throw new Error(`refusing to convert from ${prev} to symlink for ${p}`);
  before.state = prev;
  after.state = 'link';
  let changed = false;
  if (prev !== 'link') {
    if (src === undefined) throw new Error('src is required for creating new symlinks');
    changed = true;
  } else if (src !== undefined) {
    const old = readlinkSync(p);
    if (old !== src) {
      before.src = old;
      after.src = src;
      changed = true;
    }
  }
  if (changed && !ctx.checkMode && src !== undefined) {
    if (prev !== 'absent') {
      const tmp = path.join(path.dirname(p), `.${process.pid}.${Date.now() / 1000}.tmp`);
      try {
        if (prev === 'directory') rmdirSync(p);
        symlinkSync(src, tmp);
        renameSync(tmp, p);
      } catch (e) {
        if (existsSync(tmp)) unlinkSync(tmp);
        throw new Error(`Error while replacing: ${(e as Error).message}`);
      }
    } else {
      try {
        symlinkSync(src, p);
      } catch (e) {
        throw new Error(`Error while linking: ${(e as Error).message}`);
      }
    }
  }
  if (ctx.checkMode && !existsSync(p)) return { status: changed ? 'changed' : 'ok', data: { dest: p, src: src ?? null, state: prev === 'link' ? 'link' : 'absent' }, ...(changed && ctx.diffMode ? { diff: [attrDiff(p, before, after)] } : {}) };
  if (t.follow && lstatSync(p).isSymbolicLink() && !existsSync(p)) ctx.log.warn('Cannot set fs attributes on a non-existent symlink target. follow should be set to False to avoid this.');
  else changed = attrs(p, t.follow) || changed;
  return finish(changed, 'dest', p, { src: src ?? null }, attrDiff(p, before, after), ctx);
}

function hard(p: string, prev: string, src: string | undefined, t: Times, ctx: ModuleContext, before: Record<string, unknown>, after: Record<string, unknown>, attrs: (target: string, follow?: boolean) => boolean): ModuleResult<Data> {
  if (src === undefined) throw new Error('src is required for creating new hard links');
  const absrc = path.resolve(path.dirname(p), src);
  if (!existsSync(absrc)) throw new Error(`src does not exist: ${absrc}`);
  before.state = prev;
  after.state = 'hard';
  let changed = false;
  if (prev === 'hard' || prev === 'file') {
    if (statSync(p).ino !== statSync(absrc).ino) {
      if (!t.force && prev === 'file') throw new Error(`Cannot link, file exists at destination: ${p}`);
      changed = true;
    }
  } else if (prev === 'directory') {
    throw new Error(`Cannot link: ${p} is a directory`);
  } else if (prev === 'link') {
    if (!t.force) throw new Error(`Cannot link, different hard link exists at destination: ${p}`);
    changed = true;
  } else changed = true;
  if (changed && !ctx.checkMode) {
    if (prev === 'absent') linkSync(absrc, p);
    else {
      const tmp = path.join(path.dirname(p), `.${process.pid}.${Date.now() / 1000}.tmp`);
      linkSync(absrc, tmp);
      renameSync(tmp, p);
    }
  }
  if (ctx.checkMode && !existsSync(p)) return { status: changed ? 'changed' : 'ok', data: { dest: p, src, state: 'absent' } };
  changed = attrs(p, t.follow) || changed;
  return finish(changed, 'dest', p, { src }, attrDiff(p, before, after), ctx);
}
