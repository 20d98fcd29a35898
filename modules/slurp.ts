/**
 * `slurp`: read a local file as base64, as ansible.builtin.slurp does under `connection: local`.
 */
import { readFileSync, statSync } from 'node:fs';
import { defineModule, localPath, Type } from 'kplay/sdk';

export default defineModule({
  name: 'slurp',
  summary: 'Read a local file as base64 (ansible.builtin.slurp)',
  description: 'Reads a file on the machine running kplay, as `ansible.builtin.slurp` with `connection: local`: `content` is the file base64-encoded (decode it with `| b64decode`), `encoding` is `base64`, `source` the path as given. Never changes anything. A relative path is relative to the working directory kplay runs in.',
  schema: Type.Object(
    {
      src: Type.Optional(Type.String({ description: 'The file to read (required; alias `path`).', examples: ['/etc/hostname'] })),
      path: Type.Optional(Type.String({ description: 'Alias of `src`.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    content: Type.String({ description: 'The file\'s bytes, base64-encoded.' }),
    encoding: Type.String({ description: 'Always `base64`.' }),
    source: Type.String({ description: 'The path read (as given).' }),
  }),
  diffMode: 'unsupported',
  checkMode: 'supported',
  readOnly: true,
  examples: [{ title: 'Read a token', yaml: '- slurp:\n    src: /var/run/secrets/token\n  register: tok\n- set_fact:\n    token: "{{ tok.content | b64decode }}"' }],
  async run(args) {
    const src = args.src ?? args.path;
    if (src === undefined) return { status: 'failed', msg: 'missing required arguments: src' };
    const p = localPath(src);
    let data: Buffer;
    try {
      if (statSync(p).isDirectory()) return { status: 'failed', msg: `Source is a directory and must be a file: ${src}` };
      data = readFileSync(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { status: 'failed', msg: `File not found: ${src}` };
      if (code === 'EACCES') return { status: 'failed', msg: `File is not readable: ${src}` };
      return { status: 'failed', msg: `Unable to slurp file: ${src}: ${(e as Error).message}` };
    }
    return { status: 'ok', data: { content: data.toString('base64'), encoding: 'base64', source: src } };
  },
});
