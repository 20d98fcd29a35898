/**
 * `tempfile`: create a temporary file or directory on the machine running kplay, as
 * ansible.builtin.tempfile does under `connection: local`.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineModule, localPath, pathInfo, Default, StringEnum, Type, PathAttrsResult } from 'kplay/sdk';

const CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789_';

/** Python's `tempfile` random names: 8 characters of `[a-z0-9_]`. */
function randomName(): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += CHARS[Math.floor(Math.random() * CHARS.length)];
  return s;
}

export default defineModule({
  name: 'tempfile',
  summary: 'Create a local temporary file or directory (ansible.builtin.tempfile)',
  description: 'Creates `PREFIXrandomSUFFIX` (mode 0600 for a file, 0700 for a directory) in `path` (default: `$TMPDIR`, else /tmp), as `ansible.builtin.tempfile` with `connection: local`; the result `path` is the new path. Always changed. Not run in check mode (as Ansible: skipped). Remove it with `file: state=absent` when done.',
  schema: Type.Object(
    {
      state: Default(StringEnum(['file', 'directory'], { description: 'Create a file or a directory.' }), 'file'),
      path: Type.Optional(Type.String({ description: 'Directory to create it in (default: the system\'s temporary directory).' })),
      prefix: Default(Type.String({ description: 'Start of the name.' }), 'ansible.'),
      suffix: Default(Type.String({ description: 'End of the name.' }), ''),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    path: Type.Optional(Type.String({ description: 'The path created.' })),
    state: Type.Optional(Type.String({ description: '`file` or `directory`.' })),
    ...PathAttrsResult,
  }),
  diffMode: 'unsupported',
  checkMode: 'unsupported',
  examples: [{ title: 'A scratch directory', yaml: '- tempfile:\n    state: directory\n    suffix: render\n  register: scratch\n- debug:\n    msg: "rendering into {{ scratch.path }}"' }],
  async run(args) {
    for (const [k, v] of [['prefix', args.prefix], ['suffix', args.suffix]] as const) {
      if (v && v !== path.basename(v)) return { status: 'failed', msg: `${k} must be a valid file name component, got '${v}'` };
    }
    const dir = args.path !== undefined ? localPath(args.path) : process.env.TMPDIR || process.env.TEMP || process.env.TMP || os.tmpdir();
    if (!existsSync(dir)) return { status: 'failed', msg: `No such file or directory: '${dir}'` };
    try {
      let p: string;
      for (;;) {
        p = path.join(dir, `${args.prefix}${randomName()}${args.suffix}`);
        try {
          if (args.state === 'directory') mkdirSync(p, 0o700);
          else closeSync(openSync(p, 'wx', 0o600));
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
      }
      return { status: 'changed', data: { path: p, ...pathInfo(p) } };
    } catch (e) {
      return { status: 'failed', msg: `Failed to create temporary ${args.state}: ${(e as Error).message}` };
    }
  },
});
