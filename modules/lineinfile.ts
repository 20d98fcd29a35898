/**
 * `lineinfile`: make sure a line is in (or not in) a local file, as ansible.builtin.lineinfile
 * does under `connection: local`.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { applyAttrs, contentDiff, defineModule, localPath, pyExpand, pyRegex, writeDest, Default, StringEnum, Type, type DiffEntry, type ModuleContext, type ModuleResult } from 'kplay/sdk';

/** Lines with their endings, as Python's `readlines()` on bytes. */
function readLines(p: string): string[] {
  const text = readFileSync(p, 'utf8');
  return text === '' ? [] : (text.match(/[^\n]*\n|[^\n]+$/g) ?? []);
}

const strip = (l: string): string => l.replace(/[\r\n]+$/, '');

interface Common {
  dest: string;
  backup: boolean;
  validate?: string;
  mode?: string | number;
  owner?: string;
  group?: string;
}

type Data = { backup: string; found?: number };

/** Write the lines (when changed), then the attributes; the result as ansible's lineinfile. */
async function finish(c: Common, before: string, lines: string[], changed0: boolean, msg0: string, ctx: ModuleContext, found?: number): Promise<ModuleResult<Data>> {
  let changed = changed0;
  let msg = msg0;
  let backup = '';
  const after = lines.join('');
  if (changed && !ctx.checkMode) {
    const w = await writeDest({ dest: c.dest, content: Buffer.from(after, 'utf8'), force: true, backup: c.backup && existsSync(c.dest), validate: c.validate }, ctx);
    if (w.status === 'failed') return { status: 'failed', msg: w.msg, data: w.data };
    if (w.status !== 'skipped' && typeof w.data?.backup_file === 'string') backup = w.data.backup_file;
  }
  const diff: DiffEntry[] = changed ? [contentDiff(`${c.dest} (content)`, before, after)] : [];
  const extra = found === undefined ? {} : { found };
  if (ctx.checkMode && !existsSync(c.dest)) return { status: changed ? 'changed' : 'ok', msg, data: { backup, ...extra }, ...(ctx.diffMode && diff.length ? { diff } : {}) };
  let attrs;
  try {
    attrs = applyAttrs(c.dest, { mode: c.mode, owner: c.owner, group: c.group }, ctx.checkMode);
  } catch (e) {
    return { status: 'failed', msg: (e as Error).message };
  }
  if (attrs.changed) {
    if (changed) msg += ' and ';
    changed = true;
    msg += 'ownership, perms or SE linux context changed';
    diff.push({ label: `${c.dest} (file attributes)`, before: Object.entries(attrs.before).map(([k, v]) => `${k}: ${v}\n`).join(''), after: Object.entries(attrs.after).map(([k, v]) => `${k}: ${v}\n`).join('') });
  }
  return { status: changed ? 'changed' : 'ok', msg, data: { backup, ...extra }, ...(ctx.diffMode && diff.length ? { diff } : {}) };
}

export default defineModule({
  name: 'lineinfile',
  summary: 'Make sure a line is in a local file, or replace/remove lines matching a pattern (ansible.builtin.lineinfile)',
  description: 'Edits a file on the machine running kplay, as `ansible.builtin.lineinfile` with `connection: local`: `regexp` (Python syntax; the last matching line, or the first with `firstmatch`) or `search_string` is replaced by `line` (`backrefs` fills in groups and changes nothing when there is no match), else `line` is inserted after `insertafter` / before `insertbefore` (a pattern, `EOF`, `BOF`; default at the end) unless it is already there; `state: absent` removes every matching line. `create`, `backup`, `validate`, `mode`/`owner`/`group`, check mode, `--diff`. Result: `msg` (`line added`, `line replaced`, `N line(s) removed`…), `backup`, `found` (absent).',
  schema: Type.Object(
    {
      path: Type.Optional(Type.String({ description: 'The file (required; aliases `dest`, `destfile`, `name`).', examples: ['/etc/hosts'] })),
      dest: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      destfile: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      name: Type.Optional(Type.String({ description: 'Alias of `path`.' })),
      state: Default(StringEnum(['present', 'absent'], { description: 'Whether the line should be there.' }), 'present'),
      regexp: Type.Optional(Type.String({ description: 'Python regular expression a line to replace (present) or remove (absent) matches (alias `regex`).' })),
      regex: Type.Optional(Type.String({ description: 'Alias of `regexp`.' })),
      search_string: Type.Optional(Type.String({ description: 'Literal text a line to replace or remove contains.' })),
      line: Type.Optional(Type.String({ description: 'The line (required with state present; alias `value`).' })),
      value: Type.Optional(Type.String({ description: 'Alias of `line`.' })),
      insertafter: Type.Optional(Type.String({ description: 'Insert after the last line matching this pattern, or `EOF` (default) / `BOF`.' })),
      insertbefore: Type.Optional(Type.String({ description: 'Insert before the last line matching this pattern, or `BOF`.' })),
      backrefs: Default(Type.Boolean({ description: 'Fill `\\1`, `\\g<name>` in `line` from `regexp`; no match: nothing changes.' }), false),
      create: Default(Type.Boolean({ description: 'Create the file when it does not exist.' }), false),
      backup: Default(Type.Boolean({ description: 'Keep the old file as `path.PID.DATE@TIME~` (result `backup`).' }), false),
      firstmatch: Default(Type.Boolean({ description: 'Use the first matching line instead of the last.' }), false),
      validate: Type.Optional(Type.String({ description: 'Command checking the new file before it is put in place; `%s` is the file.' })),
      mode: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'Permissions of the file.' })),
      owner: Type.Optional(Type.String({ description: 'Owner of the file.' })),
      group: Type.Optional(Type.String({ description: 'Group of the file.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    backup: Type.String({ description: 'The backup made (`backup: true`), else empty.' }),
    found: Type.Optional(Type.Integer({ description: 'Lines removed (state absent).' })),
  }),
  diffMode: 'supported',
  checkMode: 'supported',
  declaresState: true,
  examples: [{ title: 'Set a key in a config file', yaml: '- lineinfile:\n    path: /tmp/kplay/app.env\n    regexp: "^REPLICAS="\n    line: "REPLICAS={{ replicas }}"\n    create: true' }],
  async run(args, ctx) {
    const given = args.path ?? args.dest ?? args.destfile ?? args.name;
    if (given === undefined) return { status: 'failed', msg: 'missing required arguments: path' };
    const regexp = args.regexp ?? args.regex;
    const line = args.line ?? args.value;
    const search = args.search_string;
    if (args.insertbefore !== undefined && args.insertafter !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: insertbefore|insertafter' };
    if (regexp !== undefined && search !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: regexp|search_string' };
    if (args.backrefs && search !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: backrefs|search_string' };
    if (regexp === '' || search === '') ctx.log.warn(`The ${regexp === '' ? 'regular expression' : 'search string'} is an empty string, which will match every line in the file.`);
    const dest = localPath(given);
    if (existsSync(dest) && statSync(dest).isDirectory()) return { status: 'failed', msg: `Path ${given} is a directory !`, data: { rc: 256 } };
    let re: RegExp | undefined;
    try {
      re = regexp === undefined ? undefined : pyRegex(regexp);
    } catch (e) {
      return { status: 'failed', msg: `regexp: ${(e as Error).message}` };
    }
    const common: Common = { dest, backup: args.backup, validate: args.validate, mode: args.mode, owner: args.owner, group: args.group };
    if (args.state === 'absent') {
      if (regexp === undefined && search === undefined && line === undefined) return { status: 'failed', msg: 'one of line, search_string, or regexp is required with state=absent' };
      if (!existsSync(dest)) return { status: 'ok', msg: 'file not present', data: { backup: '' } };
      const lines = readLines(dest);
      const before = lines.join('');
      const kept = lines.filter((l) => !(re ? re.test(l) : search !== undefined ? l.includes(search) : strip(l) === line));
      const found = lines.length - kept.length;
      return finish(common, before, kept, found > 0, found > 0 ? `${found} line(s) removed` : '', ctx, found);
    }
    if (args.backrefs && regexp === undefined) return { status: 'failed', msg: 'regexp is required with backrefs=true' };
    if (line === undefined) return { status: 'failed', msg: 'line is required with state=present' };
    let lines: string[];
    if (!existsSync(dest)) {
      if (!args.create) return { status: 'failed', msg: `Destination ${given} does not exist !`, data: { rc: 257 } };
      if (!ctx.checkMode && !existsSync(path.dirname(dest))) mkdirSync(path.dirname(dest), { recursive: true });
      lines = [];
    } else lines = readLines(dest);
    const before = lines.join('');
    const insBef = args.insertbefore;
    const insAft = insBef === undefined && args.insertafter === undefined ? 'EOF' : args.insertafter;
    let ins: RegExp | undefined;
    try {
      ins = insAft !== undefined && insAft !== 'BOF' && insAft !== 'EOF' ? pyRegex(insAft) : insBef !== undefined && insBef !== 'BOF' ? pyRegex(insBef) : undefined;
    } catch (e) {
      return { status: 'failed', msg: `insertafter/insertbefore: ${(e as Error).message}` };
    }
    let index0 = -1;
    let index1 = -1;
    let match: RegExpExecArray | boolean | undefined;
    if (re) {
      for (let i = 0; i < lines.length; i++) {
        const m = re.exec(lines[i] as string);
        if (m) {
          index0 = i;
          match = m;
          if (args.firstmatch) break;
        }
      }
    }
    if (search !== undefined) {
      for (let i = 0; i < lines.length; i++) {
        if ((lines[i] as string).includes(search)) {
          index0 = i;
          match = true;
          if (args.firstmatch) break;
        }
      }
    }
    if (!match) {
      for (let i = 0; i < lines.length; i++) {
        const cur = lines[i] as string;
        if (line === strip(cur)) index0 = i;
        else if (ins && ins.test(cur)) {
          if (insAft !== undefined) {
            index1 = i + 1;
            if (args.firstmatch) break;
          }
          if (insBef !== undefined) {
            index1 = i;
            if (args.firstmatch) break;
          }
        }
      }
    }
    let msg = '';
    let changed = false;
    const add = (at: number): void => {
      lines.splice(at, 0, `${line}\n`);
      msg = 'line added';
      changed = true;
    };
    if (index0 !== -1) {
      let newLine = line;
      if (args.backrefs && match && typeof match !== 'boolean') {
        try {
          newLine = pyExpand(match, line);
        } catch (e) {
          return { status: 'failed', msg: `backrefs: ${(e as Error).message}` };
        }
      }
      if (!newLine.endsWith('\n')) newLine += '\n';
      if (lines[index0] !== newLine) {
        lines[index0] = newLine;
        msg = 'line replaced';
        changed = true;
      }
    } else if (args.backrefs) {
      // no match: nothing can be generated safely (as Ansible)
    } else if (insBef === 'BOF' || insAft === 'BOF') add(0);
    else if (insAft === 'EOF' || index1 === -1) {
      const last = lines[lines.length - 1];
      if (last !== undefined && !/[\n\r]$/.test(last)) lines.push('\n');
      add(lines.length);
    } else if (insAft !== undefined && index1 !== -1) {
      if (lines.length === index1) {
        if (strip(lines[index1 - 1] as string) !== line) add(lines.length);
      } else if (line !== strip(lines[index1] as string)) add(index1);
    } else add(index1);
    return finish(common, before, lines, changed, msg, ctx);
  },
});
