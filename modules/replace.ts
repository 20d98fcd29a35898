/**
 * `replace`: replace every match of a pattern in a local file, as ansible.builtin.replace does
 * under `connection: local` (Python `re.subn` with MULTILINE over the file, or over the section
 * between `after` and `before`).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { applyAttrs, contentDiff, defineModule, localPath, pyExpand, pyRegex, writeDest, Default, Type, type DiffEntry } from 'kplay/sdk';

/** A Python pattern as a JavaScript RegExp with exactly `flags` (pyRegex always adds `m`). */
function withFlags(src: string, flags: string): RegExp {
  const re = pyRegex(src);
  const inline = re.flags.replace(/[^is]/g, '');
  // (`m` only when asked: the before/after section is searched without MULTILINE, as Python's)
  return new RegExp(re.source, [...new Set([...inline, ...flags])].join(''));
}

/** Python's `re.subn(pattern, template, text)`: the new text and the number of replacements. */
function subn(re: RegExp, template: string, text: string): [string, number] {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let out = '';
  let last = 0;
  let n = 0;
  for (let m = g.exec(text); m; m = g.exec(text)) {
    out += text.slice(last, m.index) + pyExpand(m, template);
    last = m.index + m[0].length;
    n++;
    if (m[0].length === 0) g.lastIndex++;
  }
  return [out + text.slice(last), n];
}

export default defineModule({
  name: 'replace',
  summary: 'Replace every match of a pattern in a local file (ansible.builtin.replace)',
  description:
    'Edits a file on the machine running kplay, as `ansible.builtin.replace` with `connection: local`: every match of `regexp` (Python syntax, multiline: `^`/`$` match at each line) is replaced by `replace` (`\\1`, `\\g<name>` fill in groups), in the whole file or only between `after` and `before` (patterns; the section between the first match of each). `backup`, `validate`, `mode`/`owner`/`group`, check mode, `--diff`. Result: `msg` (`N replacements made`, or empty when nothing changed), `rc`, `backup_file`.',
  schema: Type.Object(
    {
      path: Type.Optional(Type.String({ description: 'The file (required; aliases `dest`, `destfile`, `name`).', examples: ['/tmp/kplay/values.yaml'] })),
      dest: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      destfile: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      name: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      regexp: Type.String({ description: 'Python regular expression to replace every match of (MULTILINE).', examples: ['^(\\s*tag:).*$'] }),
      replace: Default(Type.String({ description: 'The replacement: `\\1`, `\\g<1>`, `\\g<name>` fill in groups; empty removes the matches.' }), ''),
      after: Type.Optional(Type.String({ description: 'Only replace after the first match of this pattern (DOTALL).' })),
      before: Type.Optional(Type.String({ description: 'Only replace before the first match of this pattern (DOTALL).' })),
      backup: Default(Type.Boolean({ description: 'Keep the old file as `path.PID.DATE@TIME~` (result `backup_file`).' }), false),
      validate: Type.Optional(Type.String({ description: 'Command checking the new file before it is put in place; `%s` is the file.' })),
      encoding: Default(Type.String({ description: 'Character set of the file (kplay reads and writes UTF-8; other values are refused).' }), 'utf-8'),
      mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions of the file.' })),
      owner: Type.Optional(Type.String({ description: 'Owner of the file.' })),
      group: Type.Optional(Type.String({ description: 'Group of the file.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    rc: Type.Integer({ description: '0 (Ansible\'s field).' }),
    backup_file: Type.Optional(Type.String({ description: 'The backup made (`backup: true` and a change).' })),
  }),
  diffMode: 'supported',
  checkMode: 'supported',
  declaresState: true,
  examples: [{ title: 'Pin an image tag in a values file', yaml: '- replace:\n    path: /tmp/kplay/values.yaml\n    regexp: "^(\\\\s*tag:).*$"\n    replace: "\\\\1 \\"{{ version }}\\""' }],
  async run(args, ctx) {
    const given = args.path ?? args.dest ?? args.destfile ?? args.name;
    if (given === undefined) return { status: 'failed', msg: 'missing required arguments: path' };
    if (!/^utf-?8$/i.test(args.encoding)) return { status: 'failed', msg: `encoding: kplay reads and writes UTF-8 only, got '${args.encoding}'` };
    const dest = localPath(given);
    if (existsSync(dest) && statSync(dest).isDirectory()) return { status: 'failed', msg: `Path ${given} is a directory !`, data: { rc: 256 } };
    if (!existsSync(dest)) return { status: 'failed', msg: `Path ${given} does not exist !`, data: { rc: 257 } };
    const contents = readFileSync(dest, 'utf8');
    let section = contents;
    let span: [number, number] | undefined;
    const pattern = args.after && args.before ? `${args.after}(?P<subsection>.*?)${args.before}` : args.after ? `${args.after}(?P<subsection>.*)` : args.before ? `(?P<subsection>.*)${args.before}` : '';
    let mre: RegExp;
    try {
      if (pattern) {
        const m = withFlags(pattern, 'sd').exec(contents);
        const at = m?.indices?.groups?.subsection;
        if (!m || !at) return { status: 'ok', msg: `Pattern for before/after params did not match the given file: ${pattern}`, data: { rc: 0 } };
        span = [at[0], at[1]];
        section = contents.slice(at[0], at[1]);
      }
      mre = withFlags(args.regexp, 'm');
    } catch (e) {
      return { status: 'failed', msg: `Unable to process replace due to error: ${(e as Error).message}` };
    }
    let replaced: [string, number];
    try {
      replaced = subn(mre, args.replace, section);
    } catch (e) {
      return { status: 'failed', msg: `Unable to process replace due to error: ${(e as Error).message}` };
    }
    let changed = replaced[1] > 0 && replaced[0] !== section;
    let msg = changed ? `${replaced[1]} replacements made` : '';
    const after = changed ? (span ? contents.slice(0, span[0]) + replaced[0] + contents.slice(span[1]) : replaced[0]) : contents;
    const diff: DiffEntry[] = changed ? [contentDiff(`${given} (content)`, contents, after)] : [];
    const data: { rc: number; backup_file?: string } = { rc: 0 };
    if (changed && !ctx.checkMode) {
      const w = await writeDest({ dest, content: Buffer.from(after, 'utf8'), force: true, backup: args.backup, validate: args.validate }, ctx);
      if (w.status === 'failed') return { status: 'failed', msg: w.msg, data: w.data };
      if (w.status !== 'skipped' && typeof w.data?.backup_file === 'string') data.backup_file = w.data.backup_file;
    }
    let attrs;
    try {
      attrs = applyAttrs(dest, { mode: args.mode, owner: args.owner, group: args.group }, ctx.checkMode);
    } catch (e) {
      return { status: 'failed', msg: (e as Error).message };
    }
    if (attrs.changed) {
      if (changed) msg += ' and ';
      changed = true;
      msg += 'ownership, perms or SE linux context changed';
    }
    return { status: changed ? 'changed' : 'ok', msg, data, ...(ctx.diffMode && diff.length ? { diff } : {}) };
  },
});
