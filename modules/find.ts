/**
 * `find`: local files by name pattern, type, depth and content, as ansible.builtin.find does
 * under `connection: local` (the shape real playbooks use before `k8s: src: "{{ item.path }}"`).
 */
import { lstatSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { defineModule, digest, fnmatchRegex, groupName, localPath, userName, Default, StringEnum, Type } from 'kplay/sdk';

const ALGORITHMS = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'] as const;


/** A list argument as Ansible takes it: a list, or a comma-separated string. */
function list(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter((x) => x !== '');
}

/** The stat fields ansible.builtin.find gives each match. */
function statInfo(p: string, st: Stats): Record<string, unknown> {
  const mode = st.mode;
  const out: Record<string, unknown> = {
    path: p,
    mode: (mode & 0o7777).toString(8).padStart(4, '0'),
    isdir: st.isDirectory(),
    ischr: st.isCharacterDevice(),
    isblk: st.isBlockDevice(),
    isreg: st.isFile(),
    isfifo: st.isFIFO(),
    islnk: st.isSymbolicLink(),
    issock: st.isSocket(),
    uid: st.uid,
    gid: st.gid,
    size: st.size,
    inode: st.ino,
    dev: st.dev,
    nlink: st.nlink,
    atime: st.atimeMs / 1000,
    mtime: st.mtimeMs / 1000,
    ctime: st.ctimeMs / 1000,
    wusr: (mode & 0o200) !== 0,
    rusr: (mode & 0o400) !== 0,
    xusr: (mode & 0o100) !== 0,
    wgrp: (mode & 0o020) !== 0,
    rgrp: (mode & 0o040) !== 0,
    xgrp: (mode & 0o010) !== 0,
    woth: (mode & 0o002) !== 0,
    roth: (mode & 0o004) !== 0,
    xoth: (mode & 0o001) !== 0,
    isuid: (mode & 0o4000) !== 0,
    isgid: (mode & 0o2000) !== 0,
  };
  const pw = userName(st.uid);
  if (pw !== String(st.uid)) out.pw_name = pw;
  const gr = groupName(st.gid);
  if (gr !== String(st.gid)) out.gr_name = gr;
  return out;
}

export default defineModule({
  name: 'find',
  summary: 'Local files by name pattern, type, depth and content, as ansible.builtin.find',
  description:
    'Lists entries under local directories, as `ansible.builtin.find` with `connection: local`: names matched against `patterns` (shell globs, or Python regular expressions matched at the start with `use_regex`) and not against `excludes`, of `file_type`, down to `depth` when `recurse`, hidden names only with `hidden`, regular files whose content matches `contains`. Registers `files` (a stat of each match: `path`, `mode`, `isdir`, `isreg`, `islnk`, `size`, `mtime`, `uid`/`gid`, `pw_name`/`gr_name`, permission flags, and `checksum` with `get_checksum`), `matched`, `examined`, `msg` and `skipped_paths` (a path that is not a directory, with why). Matches are in sorted order. Never changes anything.',
  schema: Type.Object(
    {
      paths: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Directories to search (a list or a comma-separated string; aliases `name`, `path`). Required.' })),
      name: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Alias of `paths`.' })),
      path: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Alias of `paths`.' })),
      patterns: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Basename patterns (any may match); default every name. Alias `pattern`.' })),
      pattern: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Alias of `patterns`.' })),
      excludes: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Basename patterns to leave out. Alias `exclude`.' })),
      exclude: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()], { description: 'Alias of `excludes`.' })),
      use_regex: Default(Type.Boolean({ description: 'Patterns are Python regular expressions (matched at the start of the name), not shell globs.' }), false),
      file_type: Default(StringEnum(['file', 'directory', 'link', 'any'], { description: 'Type of the entries to return.' }), 'file'),
      recurse: Default(Type.Boolean({ description: 'Descend into subdirectories.' }), false),
      depth: Type.Optional(Type.Integer({ minimum: 1, description: 'With `recurse`, at most this many levels (1: the directory itself).' })),
      hidden: Default(Type.Boolean({ description: 'Include names starting with a dot.' }), false),
      follow: Default(Type.Boolean({ description: 'Follow symlinks (report their targets; descend into linked directories).' }), false),
      contains: Type.Optional(Type.String({ description: 'A regular expression a regular file\'s content must match (line by line, or anywhere with `read_whole_file`).' })),
      read_whole_file: Default(Type.Boolean({ description: 'Match `contains` against the whole file instead of each line.' }), false),
      get_checksum: Default(Type.Boolean({ description: 'Add `checksum` to each regular file.' }), false),
      checksum_algorithm: Default(StringEnum(ALGORITHMS, { description: 'Algorithm of `checksum` (aliases `checksum`, `checksum_algo`).' }), 'sha1'),
      checksum: Type.Optional(StringEnum(ALGORITHMS, { description: 'Alias of `checksum_algorithm`.' })),
      checksum_algo: Type.Optional(StringEnum(ALGORITHMS, { description: 'Alias of `checksum_algorithm`.' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Return at most this many matches.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    files: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'A stat of each match (`path`, `mode`, `isdir`, `isreg`, `islnk`, `size`, `mtime`, …).' }),
    matched: Type.Integer({ description: 'Number of matches.' }),
    examined: Type.Integer({ description: 'Number of entries looked at.' }),
    msg: Type.String({ description: '`All paths examined` (or that the limit was reached).' }),
    skipped_paths: Type.Record(Type.String(), Type.String(), { description: 'Paths not searched, with why.' }),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  readOnly: true,
  examples: [
    {
      title: 'Apply every manifest of a directory',
      yaml: '- find:\n    paths: manifests\n    patterns: "*.yml,*.yaml"\n  register: found\n- kubernetes.core.k8s:\n    src: "{{ item.path }}"\n  loop: "{{ found.files }}"',
    },
  ],
  async run(args) {
    const roots = list(args.paths ?? args.name ?? args.path);
    if (roots.length === 0) return { status: 'failed', msg: 'missing required arguments: paths' };
    const compile = (p: string): RegExp => {
      if (!args.use_regex) return fnmatchRegex(p);
      try {
        return new RegExp(`^(?:${p})`, 's');
      } catch (e) {
        throw new Error(`find: bad regular expression ${JSON.stringify(p)}: ${(e as Error).message}`);
      }
    };
    let patterns: RegExp[];
    let excludes: RegExp[];
    let contains: RegExp | undefined;
    try {
      const given = list(args.patterns ?? args.pattern);
      patterns = (given.length ? given : ['*']).map((p) => (given.length ? compile(p) : /^/));
      excludes = list(args.excludes ?? args.exclude).map(compile);
      contains = args.contains !== undefined ? new RegExp(args.contains, args.read_whole_file ? 'm' : '') : undefined;
    } catch (e) {
      return { status: 'failed', msg: (e as Error).message };
    }
    const algorithm = args.checksum ?? args.checksum_algo ?? args.checksum_algorithm;
    const files: Record<string, unknown>[] = [];
    const skipped: Record<string, string> = {};
    let examined = 0;
    let limited = false;
    const wanted = (full: string, st: Stats): boolean => {
      const base = path.basename(full);
      if (!patterns.some((r) => r.test(base)) || excludes.some((r) => r.test(base))) return false;
      switch (args.file_type) {
        case 'any':
          return true;
        case 'directory':
          return st.isDirectory();
        case 'link':
          return st.isSymbolicLink();
        case 'file': {
          if (!st.isFile()) return false;
          if (!contains) return true;
          const text = readFileSync(full, 'utf8');
          return args.read_whole_file ? contains.test(text) : text.split('\n').some((l) => contains.test(l));
        }
      }
    };
    const walk = (dir: string, level: number): void => {
      let names: string[];
      try {
        names = readdirSync(dir).sort();
      } catch (e) {
        skipped[dir] = (e as Error).message;
        return;
      }
      examined += names.length;
      const subdirs: string[] = [];
      for (const name of names) {
        if (limited) return;
        const full = path.join(dir, name);
        let st: Stats;
        try {
          st = args.follow ? statSync(full) : lstatSync(full);
        } catch {
          continue; // vanished, or a dangling link with follow
        }
        if (st.isDirectory()) subdirs.push(full);
        if (name.startsWith('.') && !args.hidden) continue;
        if (!wanted(full, st)) continue;
        const info = statInfo(full, st);
        if (args.get_checksum && st.isFile()) info.checksum = digest(readFileSync(full), algorithm);
        files.push(info);
        if (args.limit !== undefined && files.length >= args.limit) limited = true;
      }
      if (!args.recurse || (args.depth !== undefined && level >= args.depth)) return;
      for (const d of subdirs) walk(d, level + 1);
    };
    for (const root of roots) {
      const p = localPath(root);
      let st: Stats | undefined;
      try {
        st = statSync(p);
      } catch {
        st = undefined;
      }
      if (!st?.isDirectory()) {
        skipped[root] = `'${root}' is not a directory`;
        continue;
      }
      walk(p, 1);
    }
    const msg = limited ? `Limit of matches reached: ${String(args.limit)}` : 'All paths examined';
    return { status: 'ok', data: { files, matched: files.length, examined, msg, skipped_paths: skipped } };
  },
});
