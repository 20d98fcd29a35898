/**
 * `copy`: put a file, a directory tree or inline content at a local destination, as
 * ansible.builtin.copy does under `connection: local`.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { applyAttrs, decryptFileData, defineModule, findSource, localPath, writeDest, Default, Type, type Args, type DiffEntry, type ModuleContext, type ModuleResult, type WriteData, PathAttrsResult } from 'kplay/sdk';

const schema = Type.Object(
  {
    src: Type.Optional(Type.String({ description: 'File or directory to copy. Relative: looked up as Ansible does (a role\'s `files/`, then the playbook\'s directory); with `remote_src`, a path on this machine. A directory ending in `/` copies its contents, else the directory itself.', examples: ['app.conf'] })),
    content: Type.Optional(Type.String({ description: 'Text to write instead of `src` (masked in diffs when it holds a secret).' })),
    dest: Type.String({ description: 'Destination file, or directory (ending in `/`, or existing) to copy into.', examples: ['/tmp/kplay/app.conf'] }),
    force: Type.Optional(Type.Boolean({ description: 'Replace a destination whose content differs (alias `thirsty`). Default true; false: only create.' })),
    thirsty: Type.Optional(Type.Boolean({ description: 'Alias of `force`.' })),
    backup: Default(Type.Boolean({ description: 'Keep the old file as `dest.PID.DATE@TIME~` (result `backup_file`).' }), false),
    mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions: `"0644"`, a YAML octal number, symbolic (`u=rw,g=r`), or `preserve` (the source\'s).' })),
    directory_mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions of directories created when copying a directory.' })),
    owner: Type.Optional(Type.String({ description: 'User (name or uid) to own the file.' })),
    group: Type.Optional(Type.String({ description: 'Group (name or gid) to own the file.' })),
    remote_src: Default(Type.Boolean({ description: '`src` is on the target (here: this machine, relative to the working directory) instead of the playbook\'s files.' }), false),
    follow: Default(Type.Boolean({ description: 'Follow a destination that is a symlink.' }), false),
    local_follow: Default(Type.Boolean({ description: 'Follow symlinks in the source tree.' }), true),
    validate: Type.Optional(Type.String({ description: 'Command checking the new file before it is put in place; `%s` is the file (e.g. `visudo -cf %s`).' })),
    checksum: Type.Optional(Type.String({ description: 'SHA-1 the source must have; fails otherwise.' })),
    decrypt: Default(Type.Boolean({ description: 'Decrypt a vault-encrypted source with the run\'s vault secrets (`--vault-id`, `--vault-password-file`, …); `false` copies it encrypted.' }), true),
  },
  { additionalProperties: false },
);

export default defineModule({
  name: 'copy',
  summary: 'Copy a file, a directory or inline content to a local path (ansible.builtin.copy)',
  description: [
    'Writes on the machine running kplay, as `ansible.builtin.copy` with `connection: local`: idempotent by SHA-1 (unchanged content is not rewritten), atomic, with `force`, `backup`, `validate`, `mode`/`owner`/`group`, check mode and `--diff` (text content).',
    'Result as Ansible\'s: changed: `dest`, `src`, `checksum`, `md5sum`, `mode`, `owner`, `group`, `uid`, `gid`, `size`, `state`; unchanged: `dest`, `path`, `checksum` and the same attributes. Difference: `src` is the source file kplay read (Ansible reports its temporary upload copy); with `content` there is none.',
  ].join('\n\n'),
  schema,
  result: Type.Object({
    dest: Type.String({ description: 'Destination path.' }),
    src: Type.Optional(Type.String({ description: 'The source file (when something was copied from a file).' })),
    path: Type.Optional(Type.String({ description: 'Destination path (unchanged result).' })),
    checksum: Type.Optional(Type.String({ description: 'SHA-1 of the content.' })),
    md5sum: Type.Optional(Type.String({ description: 'MD5 of the content (changed result).' })),
    backup_file: Type.Optional(Type.String({ description: 'The backup made (`backup: true`).' })),
    state: Type.Optional(Type.String({ description: '`file` (or `directory` for a tree).' })),
    ...PathAttrsResult,
  }),
  diffMode: 'supported',
  checkMode: 'supported',
  declaresState: true,
  examples: [
    { title: 'A file from the playbook\'s files', yaml: '- copy:\n    src: kubeconfig.tpl\n    dest: /tmp/kplay/kubeconfig\n    mode: "0600"' },
    { title: 'Inline content', yaml: '- copy:\n    content: "{{ values | to_nice_yaml }}"\n    dest: /tmp/kplay/values.yaml' },
  ],
  async run(args, ctx) {
    if (args.src === undefined && args.content === undefined) return { status: 'failed', msg: 'src (or content) is required' };
    if (args.src !== undefined && args.content !== undefined) return { status: 'failed', msg: 'src and content are mutually exclusive' };
    const force = args.force ?? args.thirsty ?? true;
    const trailing = args.dest.endsWith('/');
    let dest = localPath(args.dest);
    if (args.content !== undefined) {
      if (trailing || (existsSync(dest) && statSync(dest).isDirectory())) return { status: 'failed', msg: 'can not use content with a dir as dest' };
      return writeDest({ dest: followed(dest, args.follow), content: Buffer.from(args.content, 'utf8'), mode: args.mode, owner: args.owner, group: args.group, force, backup: args.backup, validate: args.validate }, ctx);
    }
    const src = args.remote_src ? localPath(args.src as string) : findSource(ctx, args.src as string, 'files');
    if (!existsSync(src)) {
      return { status: 'failed', msg: args.remote_src ? `Source ${src} not found` : `Could not find or access '${args.src}' (looked at ${src}). If you are using a module and expect the file to exist on the remote, see the remote_src option` };
    }
    if (statSync(src).isDirectory()) {
      const into = (args.src as string).endsWith('/') ? dest : path.join(dest, path.basename(src));
      return copyTree(src, into, dest, args, force, ctx);
    }
    if (trailing || (existsSync(dest) && statSync(dest).isDirectory())) {
      if (trailing && !existsSync(dest) && !ctx.checkMode) mkdirSync(dest, { recursive: true });
      dest = path.join(dest, path.basename(src));
    }
    let content: Buffer = readFileSync(src);
    if (args.decrypt) {
      // a vault-encrypted source is decrypted with the run's vault secrets, as ansible-core does; its plaintext is a secret
      try {
        const r = decryptFileData(content, src, { realFile: true });
        if (r.vaulted) ctx.addSecret(r.data.toString('utf8'), true);
        content = r.data;
      } catch (e) {
        return { status: 'failed', msg: e instanceof Error ? e.message : String(e) };
      }
    }
    if (args.checksum !== undefined) {
      const actual = createHash('sha1').update(content).digest('hex');
      if (actual !== args.checksum) return { status: 'failed', msg: `Copied file does not match the expected checksum. Transfer failed.`, data: { checksum: actual, expected_checksum: args.checksum } };
    }
    return writeDest({ dest: followed(dest, args.follow), content, src, srcMode: statSync(src).mode & 0o7777, mode: args.mode, owner: args.owner, group: args.group, force, backup: args.backup, validate: args.validate }, ctx);
  },
});

/** The destination, or (with `follow`) the file its symlink points to. */
function followed(dest: string, follow: boolean): string {
  if (!follow) return dest;
  try {
    return realpathSync(dest);
  } catch {
    return dest;
  }
}


/** Copy a directory tree: every file through {@link writeDest}; changed when any file or directory was. */
async function copyTree(src: string, into: string, dest: string, args: Args<typeof schema>, force: boolean, ctx: ModuleContext): Promise<ModuleResult<WriteData>> {
  let changed = false;
  const diffs: DiffEntry[] = [];
  const walk = async (from: string, to: string): Promise<ModuleResult<WriteData> | undefined> => {
    if (!existsSync(to)) {
      changed = true;
      if (!ctx.checkMode) mkdirSync(to);
    }
    if (existsSync(to) && args.directory_mode !== undefined) changed = applyAttrs(to, { mode: args.directory_mode, owner: args.owner, group: args.group }, ctx.checkMode).changed || changed;
    for (const name of readdirSync(from).sort()) {
      const s = path.join(from, name);
      const st = args.local_follow ? statSync(s) : lstatSync(s);
      if (st.isDirectory()) {
        const bad = await walk(s, path.join(to, name));
        if (bad) return bad;
      } else if (st.isFile()) {
        const r = await writeDest({ dest: path.join(to, name), content: readFileSync(s), src: s, srcMode: st.mode & 0o7777, mode: args.mode, owner: args.owner, group: args.group, force, backup: args.backup, validate: args.validate }, ctx);
        if (r.status === 'failed') return r;
        if (r.status === 'changed') changed = true;
        if ('diff' in r && r.diff) diffs.push(...r.diff);
      }
    }
    return undefined;
  };
  const bad = await walk(src, into);
  if (bad) return bad;
  return { status: changed ? 'changed' : 'ok', data: { dest: args.dest.endsWith('/') ? `${dest}/` : dest, src, state: 'directory' }, ...(diffs.length ? { diff: diffs } : {}) };
}
