/**
 * `template`: render a Jinja template file with the task's variables to a local destination, as
 * ansible.builtin.template does under `connection: local`.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decryptFileData, defineModule, findSource, localPath, userName, writeDest, Default, StringEnum, Type, PathAttrsResult } from 'kplay/sdk';

export default defineModule({
  name: 'template',
  summary: 'Render a Jinja template file to a local path (ansible.builtin.template)',
  description: [
    'Renders `src` with kplay\'s template engine (the expression language and statements of ansible-core 2.19, `trim_blocks` on, trailing newlines kept) and the task\'s variables plus Ansible\'s template variables (`ansible_managed`, `template_host`, `template_path`, `template_fullpath`, `template_destpath`, `template_uid`, `template_run_date`), then writes it as `copy` does: idempotent by SHA-1, atomic, `force`, `backup`, `validate`, `mode`/`owner`/`group`, check mode, `--diff`.',
    'A relative `src` is looked up as Ansible does (a role\'s `templates/`, then the playbook\'s directory); `dest` is relative to the working directory. Not supported (a clear error when set): other delimiters (`variable_start_string`…), `trim_blocks: false`, `lstrip_blocks: true`, `output_encoding` other than utf-8.',
  ].join('\n\n'),
  schema: Type.Object(
    {
      src: Type.String({ description: 'The template file (Jinja).', examples: ['values.yaml.j2'] }),
      dest: Type.String({ description: 'Where to write the result (a directory: the template\'s name without `.j2` inside it).', examples: ['/tmp/kplay/values.yaml'] }),
      force: Default(Type.Boolean({ description: 'Replace a destination whose content differs; false: only create.' }), true),
      backup: Default(Type.Boolean({ description: 'Keep the old file as `dest.PID.DATE@TIME~` (result `backup_file`).' }), false),
      mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions: `"0644"`, a YAML octal number, symbolic, or `preserve` (the template\'s).' })),
      owner: Type.Optional(Type.String({ description: 'User (name or uid) to own the file.' })),
      group: Type.Optional(Type.String({ description: 'Group (name or gid) to own the file.' })),
      follow: Default(Type.Boolean({ description: 'Follow a destination that is a symlink.' }), false),
      validate: Type.Optional(Type.String({ description: 'Command checking the new file before it is put in place; `%s` is the file.' })),
      newline_sequence: Default(StringEnum(['\n', '\r', '\r\n'], { description: 'Line ending of the result.' }), '\n'),
      trim_blocks: Default(Type.Boolean({ description: 'Drop the newline after a block tag (only `true` is supported).' }), true),
      lstrip_blocks: Default(Type.Boolean({ description: 'Strip whitespace before a block tag (only `false` is supported).' }), false),
      output_encoding: Default(Type.String({ description: 'Encoding of the result (only utf-8 is supported).' }), 'utf-8'),
      block_start_string: Default(Type.String({ description: 'Only `{%` is supported.' }), '{%'),
      block_end_string: Default(Type.String({ description: 'Only `%}` is supported.' }), '%}'),
      variable_start_string: Default(Type.String({ description: 'Only `{{` is supported.' }), '{{'),
      variable_end_string: Default(Type.String({ description: 'Only `}}` is supported.' }), '}}'),
      comment_start_string: Default(Type.String({ description: 'Only `{#` is supported.' }), '{#'),
      comment_end_string: Default(Type.String({ description: 'Only `#}` is supported.' }), '#}'),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    dest: Type.String({ description: 'Destination path.' }),
    src: Type.Optional(Type.String({ description: 'The template file (changed result).' })),
    path: Type.Optional(Type.String({ description: 'Destination path (unchanged result).' })),
    checksum: Type.Optional(Type.String({ description: 'SHA-1 of the rendered content.' })),
    md5sum: Type.Optional(Type.String({ description: 'MD5 of the rendered content (changed result).' })),
    backup_file: Type.Optional(Type.String({ description: 'The backup made (`backup: true`).' })),
    state: Type.Optional(Type.String({ description: '`file`.' })),
    ...PathAttrsResult,
  }),
  diffMode: 'supported',
  checkMode: 'supported',
  declaresState: true,
  examples: [{ title: 'Render values for helm', yaml: '- template:\n    src: values.yaml.j2\n    dest: /tmp/kplay/{{ cluster_name }}-values.yaml\n    mode: "0600"' }],
  async run(args, ctx) {
    const unsupported: string[] = [];
    if (!args.trim_blocks) unsupported.push('trim_blocks: false');
    if (args.lstrip_blocks) unsupported.push('lstrip_blocks: true');
    if (!/^utf-?8$/i.test(args.output_encoding)) unsupported.push(`output_encoding: ${args.output_encoding}`);
    const delims: [string, string][] = [[args.block_start_string, '{%'], [args.block_end_string, '%}'], [args.variable_start_string, '{{'], [args.variable_end_string, '}}'], [args.comment_start_string, '{#'], [args.comment_end_string, '#}']];
    for (const [v, d] of delims) if (v !== d) unsupported.push(`a delimiter other than ${d} (${v})`);
    if (unsupported.length) return { status: 'failed', msg: `template: not supported by kplay: ${unsupported.join(', ')}`, data: { dest: args.dest } };
    const src = findSource(ctx, args.src, 'templates');
    if (!existsSync(src) || statSync(src).isDirectory()) return { status: 'failed', msg: `Could not find or access '${args.src}' (looked at ${src})` };
    let text: string;
    try {
      // a vault-encrypted template is decrypted with the run's vault secrets, as ansible-core does; its text is a secret
      const r = decryptFileData(readFileSync(src), src, { realFile: true });
      text = r.data.toString('utf8');
      if (r.vaulted) ctx.addSecret(text, true);
    } catch (e) {
      return { status: 'failed', msg: e instanceof Error ? e.message : String(e) };
    }
    let dest = localPath(args.dest);
    if (args.dest.endsWith('/') || (existsSync(dest) && statSync(dest).isDirectory())) dest = path.join(dest, path.basename(src).replace(/\.j2$/, ''));
    if (args.follow && existsSync(dest)) dest = realpathSync(dest);
    const vars = {
      ansible_managed: 'Ansible managed',
      template_host: os.hostname(),
      template_path: src,
      template_fullpath: src,
      template_destpath: dest,
      template_uid: userName(statSync(src).uid),
      template_run_date: new Date().toISOString().replace('T', ' ').replace('Z', ''),
    };
    let rendered: string;
    try {
      rendered = await ctx.render(text, vars);
    } catch (e) {
      return { status: 'failed', msg: `${args.src}: ${(e as Error).message}` };
    }
    if (args.newline_sequence !== '\n') rendered = rendered.replace(/\r\n|\r|\n/g, args.newline_sequence);
    return writeDest({ dest, content: Buffer.from(rendered, 'utf8'), src, srcMode: statSync(src).mode & 0o7777, mode: args.mode, owner: args.owner, group: args.group, force: args.force, backup: args.backup, validate: args.validate }, ctx);
  },
});
