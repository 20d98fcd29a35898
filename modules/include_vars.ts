/** `include_vars`: load variables from YAML/JSON files at run time (ansible.builtin.include_vars). */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Default, defineModule, errorMessage, loadYamlDoc, StringEnum, Type } from 'kplay/sdk';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Ansible's combine_vars(recursive=True): maps merge key by key, anything else is replaced. */
function mergeDeep(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObj(out[k]) && isObj(v) ? mergeDeep(out[k] as Obj, v) : v;
  return out;
}

/** The files of `dir`, walked as ansible-core does: directories in sorted order, files sorted, down to `depth` (0: all). */
function walk(dir: string, depth: number): string[] {
  const out: { root: string; files: string[] }[] = [];
  const visit = (root: string, level: number): void => {
    if (depth !== 0 && level > depth) return;
    const entries = readdirSync(root, { withFileTypes: true });
    out.push({ root, files: entries.filter((e) => statSync(path.join(root, e.name)).isFile()).map((e) => e.name).sort() });
    for (const e of entries) if (statSync(path.join(root, e.name)).isDirectory()) visit(path.join(root, e.name), level + 1);
  };
  visit(dir, 1);
  return out.sort((x, y) => (x.root < y.root ? -1 : x.root > y.root ? 1 : 0)).flatMap((r) => r.files.map((f) => path.join(r.root, f)));
}

export default defineModule({
  name: 'include_vars',
  summary: 'Load variables from YAML/JSON files at run time (ansible.builtin.include_vars)',
  description: [
    'Reads a file (`file`, or the free-form value) or every file of a directory (`dir`) and sets its variables for this cluster, just below `set_fact` in precedence (as in Ansible).',
    'A relative `file` is looked for as Ansible does: in a role, `<role>/vars/<file>` then `<role>/<file>`; elsewhere `vars/<file>` then `<file>` next to the task file. A relative `dir` is under the role\'s `vars/` (in a role) or next to the task file.',
    'Values are templates rendered when used, like other variables. Scalars tagged `!secret` in the files are masked in all output.',
  ].join('\n\n'),
  freeForm: 'file',
  schema: Type.Object(
    {
      file: Type.Optional(Type.String({ description: 'The file to load (YAML or JSON, a map of variables).' })),
      dir: Type.Optional(Type.String({ description: 'Load every file of this directory (sorted; sub-directories down to `depth`).' })),
      name: Type.Optional(Type.String({ description: 'Put the variables under this one variable instead of at the top level.' })),
      depth: Default(Type.Integer({ minimum: 0, description: 'With `dir`: how deep to go into sub-directories (0: all).' }), 0),
      files_matching: Type.Optional(Type.String({ description: 'With `dir`: only files whose name matches this regular expression.' })),
      ignore_files: Type.Optional(Type.Array(Type.String(), { description: 'With `dir`: file names (regular expressions, matched at the end) to skip.' })),
      extensions: Default(Type.Array(Type.String(), { description: 'With `dir`: the file extensions loaded.' }), ['json', 'yaml', 'yml']),
      ignore_unknown_extensions: Default(Type.Boolean({ description: 'With `dir`: skip files with other extensions instead of failing.' }), false),
      hash_behaviour: Type.Optional(StringEnum(['replace', 'merge'], { description: '`merge`: maps merge with the variables already set (recursively); `replace` (the default): they replace them.' })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    ansible_facts: Type.Record(Type.String(), Type.Unknown(), { description: 'The variables loaded.' }),
    ansible_included_var_files: Type.Array(Type.String(), { description: 'The files loaded, in order.' }),
  }),
  checkMode: 'supported',
  diffMode: 'unsupported',
  examples: [
    { title: 'Variables of the environment', yaml: '- ansible.builtin.include_vars: "{{ env }}.yml"' },
    { title: 'Every file of a directory under one name', yaml: '- include_vars:\n    dir: clusters\n    name: cluster_settings' },
  ],
  async run(args, ctx) {
    const dirArgs = ['dir', 'depth', 'files_matching', 'ignore_files'].filter((k) => (args as Obj)[k] !== undefined && !(k === 'depth' && args.depth === 0));
    if (args.file !== undefined && args.dir !== undefined) return { status: 'failed', msg: 'include_vars: give `file` or `dir`, not both' };
    if (args.file !== undefined && dirArgs.length) return { status: 'failed', msg: `include_vars: ${dirArgs.join(', ')} only go with \`dir\` (you are mixing file only and dir only arguments)` };
    if (args.file === undefined && args.dir === undefined) return { status: 'failed', msg: 'include_vars: give `file` (or the file name as the value) or `dir`' };
    const loaded: Obj = {};
    const files: string[] = [];
    const load = async (file: string): Promise<string | undefined> => {
      try {
        const { value, secrets } = await loadYamlDoc(file);
        for (const s of secrets) ctx.addSecret(s, true);
        if (value === null || value === undefined) {
          files.push(file);
          return undefined;
        }
        if (!isObj(value)) return `${file} must be stored as a dictionary/hash`;
        files.push(file);
        Object.assign(loaded, value);
        return undefined;
      } catch (e) {
        return errorMessage(e);
      }
    };
    if (args.file !== undefined) {
      const file = ctx.findFile(args.file, 'vars');
      if (!existsSync(file)) return { status: 'failed', msg: `Could not find or access '${args.file}' (looked for ${file} and the places before it: the role's vars/, vars/ next to the task file)` };
      const err = await load(file);
      if (err) return { status: 'failed', msg: err };
    } else {
      const rel = args.dir as string;
      // in a role (`role_path` is set), a relative dir is under the role's vars/, as in Ansible
      const rolePath = typeof ctx.vars.role_path === 'string' ? ctx.vars.role_path : undefined;
      const roleVars = rolePath ? path.join(rolePath, 'vars') : undefined;
      const inRole = roleVars !== undefined;
      const dir = path.isAbsolute(rel) ? rel : rolePath ? (rel.split('/')[0] === 'vars' ? path.join(rolePath, rel) : path.join(rolePath, 'vars', rel)) : path.resolve(ctx.baseDir, rel);
      if (!existsSync(dir)) return { status: 'failed', msg: `${dir} directory does not exist` };
      if (!statSync(dir).isDirectory()) return { status: 'failed', msg: `${dir} is not a directory` };
      let matcher: RegExp | undefined;
      let ignores: RegExp[];
      try {
        matcher = args.files_matching !== undefined ? new RegExp(args.files_matching) : undefined;
        ignores = (args.ignore_files ?? []).map((p) => new RegExp(`${p}$`));
      } catch (e) {
        return { status: 'failed', msg: `Invalid regular expression: ${errorMessage(e)}` };
      }
      for (const file of walk(dir, args.depth)) {
        const base = path.basename(file);
        if (inRole && roleVars && file === path.join(roleVars, 'main.yml')) continue; // a role's vars/main.yml is loaded with the role
        if (matcher && !matcher.test(base)) continue;
        if (ignores.some((r) => r.test(base))) continue;
        const ext = path.extname(base).slice(1);
        if (!args.extensions.includes(ext)) {
          if (args.ignore_unknown_extensions) continue;
          return { status: 'failed', msg: `${file} does not have a valid extension: ${args.extensions.join(', ')}` };
        }
        const err = await load(file);
        if (err) return { status: 'failed', msg: err };
      }
    }
    let facts: Obj = args.name !== undefined ? { [args.name]: loaded } : loaded;
    if (args.hash_behaviour === 'merge') {
      const existing: Obj = {};
      for (const k of Object.keys(facts)) if (isObj(ctx.vars[k])) existing[k] = ctx.vars[k];
      facts = mergeDeep(existing, facts);
    }
    return { status: 'ok', facts, data: { ansible_facts: facts, ansible_included_var_files: files } };
  },
});
