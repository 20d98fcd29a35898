/**
 * `stat`: facts about a local path (exists, type, mode, owner, size, checksum, mime type…), as
 * ansible.builtin.stat does under `connection: local`.
 */
import { accessSync, constants, lstatSync, readFileSync, readlinkSync, realpathSync, statSync, type BigIntStats } from 'node:fs';
import { defineModule, digest, groupName, localPath, runProcess, userName, Default, StringEnum, Type } from 'kplay/sdk';

/** lsattr's flag letters (ansible's FILE_ATTRIBUTES). */
const ATTRIBUTES: Record<string, string> = { A: 'noatime', a: 'append', c: 'compressed', C: 'nocow', d: 'nodump', D: 'dirsync', e: 'extents', E: 'encrypted', h: 'blocksize', i: 'immutable', I: 'indexed', j: 'journalled', N: 'inline', s: 'zero', S: 'synchronous', t: 'notail', T: 'blockroot', u: 'undelete', X: 'compressedraw', Z: 'compresseddirty' };

const ALGORITHMS = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'] as const;

const seconds = (ns: bigint): number => Number(ns) / 1e9;

function can(p: string, mode: number): boolean {
  try {
    accessSync(p, mode);
    return true;
  } catch {
    return false;
  }
}

export default defineModule({
  name: 'stat',
  summary: 'Facts about a local path (exists, type, mode, owner, size, checksum…), as ansible.builtin.stat',
  description: 'Reads a path on the machine running kplay, as `ansible.builtin.stat` with `connection: local`: the result is `stat` (`exists`, and when it exists `path`, `mode`, `isdir`/`isreg`/`islnk`…, `uid`/`gid`/`pw_name`/`gr_name`, `size`, times, permission flags, `readable`/`writeable`/`executable`, `checksum` of a regular file, `lnk_source`/`lnk_target` of a link, `mimetype`/`charset` from `file`, `attributes` from `lsattr`). Never changes anything. Relative paths are relative to the working directory kplay runs in.',
  schema: Type.Object(
    {
      path: Type.Optional(Type.String({ description: 'The path (required; aliases `dest`, `name`).', examples: ['/etc/hosts'] })),
      dest: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      name: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      follow: Default(Type.Boolean({ description: 'Follow a symlink (report its target).' }), false),
      get_checksum: Default(Type.Boolean({ description: 'Return the checksum of a regular file.' }), true),
      checksum_algorithm: Type.Optional(StringEnum(ALGORITHMS, { description: 'Checksum algorithm (aliases `checksum`, `checksum_algo`). Default `sha1`.' })),
      checksum: Type.Optional(StringEnum(ALGORITHMS, { description: 'Alias of `checksum_algorithm`.' })),
      checksum_algo: Type.Optional(StringEnum(ALGORITHMS, { description: 'Alias of `checksum_algorithm`.' })),
      get_mime: Type.Optional(Type.Boolean({ description: 'Return `mimetype` and `charset` (from the `file` command). Default true. Aliases `mime`, `mime_type`, `mime-type`.' })),
      mime: Type.Optional(Type.Boolean({ description: 'Alias of `get_mime`.' })),
      mime_type: Type.Optional(Type.Boolean({ description: 'Alias of `get_mime`.' })),
      'mime-type': Type.Optional(Type.Boolean({ description: 'Alias of `get_mime`.' })),
      get_attributes: Type.Optional(Type.Boolean({ description: 'Return `attributes`, `attr_flags` and `version` (from `lsattr`). Default true. Aliases `attr`, `attributes`.' })),
      attr: Type.Optional(Type.Boolean({ description: 'Alias of `get_attributes`.' })),
      attributes: Type.Optional(Type.Boolean({ description: 'Alias of `get_attributes`.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    stat: Type.Record(Type.String(), Type.Unknown(), { description: '`exists`; when it exists: `path`, `mode` (`0644`), `isdir`, `isreg`, `islnk`, `ischr`, `isblk`, `isfifo`, `issock`, `uid`, `gid`, `pw_name`, `gr_name`, `size`, `inode`, `dev`, `nlink`, `atime`, `mtime`, `ctime`, `blocks`, `block_size`, `device_type`, `rusr`…`xoth`, `isuid`, `isgid`, `readable`, `writeable`, `executable`, `checksum`, `lnk_source`, `lnk_target`, `mimetype`, `charset`, `version`, `attributes`, `attr_flags`.' }),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  readOnly: true,
  examples: [
    { title: 'Act when a file exists', yaml: '- stat:\n    path: /tmp/kplay/kubeconfig\n  register: kc\n- debug:\n    msg: "present, {{ kc.stat.size }} bytes"\n  when: kc.stat.exists' },
  ],
  async run(args, ctx) {
    const given = args.path ?? args.dest ?? args.name;
    if (given === undefined) return { status: 'failed', msg: 'missing required arguments: path' };
    const p = localPath(given);
    const algorithm = args.checksum_algorithm ?? args.checksum ?? args.checksum_algo ?? 'sha1';
    const getMime = args.get_mime ?? args.mime ?? args.mime_type ?? args['mime-type'] ?? true;
    const getAttr = args.get_attributes ?? args.attr ?? args.attributes ?? true;
    let st: BigIntStats;
    try {
      st = (args.follow ? statSync(p, { bigint: true }) : lstatSync(p, { bigint: true }));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'ok', data: { stat: { exists: false } } };
      return { status: 'failed', msg: (e as Error).message };
    }
    const mode = Number(st.mode);
    const out: Record<string, unknown> = {
      exists: true,
      path: given,
      mode: (mode & 0o7777).toString(8).padStart(4, '0'),
      isdir: st.isDirectory(),
      ischr: st.isCharacterDevice(),
      isblk: st.isBlockDevice(),
      isreg: st.isFile(),
      isfifo: st.isFIFO(),
      islnk: st.isSymbolicLink(),
      issock: st.isSocket(),
      uid: Number(st.uid),
      gid: Number(st.gid),
      size: Number(st.size),
      inode: Number(st.ino),
      dev: Number(st.dev),
      nlink: Number(st.nlink),
      atime: seconds(st.atimeNs),
      mtime: seconds(st.mtimeNs),
      ctime: seconds(st.ctimeNs),
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
      blocks: Number(st.blocks),
      block_size: Number(st.blksize),
      device_type: Number(st.rdev),
      readable: can(p, constants.R_OK),
      writeable: can(p, constants.W_OK),
      executable: can(p, constants.X_OK),
    };
    if (st.isSymbolicLink()) {
      try {
        out.lnk_source = realpathSync(p);
      } catch {
        out.lnk_source = p;
      }
      out.lnk_target = readlinkSync(p);
    }
    const pw = userName(Number(st.uid));
    if (pw !== String(st.uid)) out.pw_name = pw;
    const gr = groupName(Number(st.gid));
    if (gr !== String(st.gid)) out.gr_name = gr;
    if (out.isreg && out.readable && args.get_checksum) out.checksum = digest(readFileSync(p), algorithm);
    if (getMime) {
      out.mimetype = 'unknown';
      out.charset = 'unknown';
      const r = await runProcess('file', ['--mime-type', '--mime-encoding', p], { signal: ctx.signal });
      if (!r.error && r.code === 0) {
        const [mt, cs] = (r.stdout.slice(r.stdout.lastIndexOf(':') + 1)).split(';');
        if (mt !== undefined && cs !== undefined) {
          out.mimetype = mt.trim();
          out.charset = (cs.split('=')[1] ?? '').trim();
        }
      }
    }
    if (getAttr) {
      out.version = null;
      out.attributes = [];
      out.attr_flags = '';
      const r = await runProcess('lsattr', ['-vd', p], { signal: ctx.signal });
      if (!r.error && r.code === 0) {
        const [version, flags] = r.stdout.split(/\s+/);
        if (version !== undefined && flags !== undefined) {
          out.version = version.trim();
          out.attr_flags = flags.replace(/-/g, '').trim();
          out.attributes = [...(out.attr_flags as string)].map((f) => ATTRIBUTES[f]).filter((a): a is string => a !== undefined);
        }
      }
    }
    return { status: 'ok', data: { stat: out } };
  },
});
