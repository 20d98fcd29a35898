/**
 * Reading a playbook: YAML → schema check → normalised plays and task trees (see `types.ts`).
 * Everything static is checked here, before any cluster is contacted: structure, unknown
 * modules and keywords, module arguments that are not templated, template syntax, handler
 * references, and `import_tasks` / `import_playbook` files (with cycle detection). This file reads
 * the plays; their task lists are read by `tasks.ts` with the parsers of `nodes/`.
 */
import { isRecord } from '../core/shape.js';
import { setting } from '../core/settings.js';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { formatPos, InputError, type SourcePos } from '../load/errors.js';
import { validateOrThrow } from '../load/schema.js';
import { loadYamlDoc, posOf } from '../load/yaml.js';
import { closest } from '../load/suggest.js';
import { templar, Templar, UndefinedInputError } from '../template/index.js';
import { checkConnection, checkDebugger, inheritedKeywords, NOTHING_INHERITED, staticBool, yaml11Bool } from './keywords.js';
import { checkedHandlers, common, d0, roleEntryKeywords, withoutNulls } from './nodes/common.js';
import { knownAction, NO_EFFECT, posFallback, roleCollector, toList, type LoadOptions, type Obj, type Scope } from './nodes/context.js';
import { parseRoleEntry } from './roles.js';
import { importEntrySchema, playEntrySchema, playKeys } from './schema.js';
import { TASK_KEYWORDS } from './syntax.js';
import { expandRole, normaliseList } from './tasks.js';
import type { Play, Playbook, TaskCommon, TaskNode, VarPrompt } from './types.js';
import './validators.js';

export type { LoadOptions };

/** Load a playbook file (and everything it imports). */
export async function loadPlaybook(file: string, opts: LoadOptions): Promise<Playbook> {
  const abs = path.resolve(file);
  const secrets: string[] = [];
  const plays = await loadPlays(abs, opts, [abs], secrets, undefined);
  return { file: abs, dir: path.dirname(abs), plays, secrets };
}

async function loadPlays(file: string, opts: LoadOptions, stack: string[], secrets: string[], from: SourcePos | undefined): Promise<Play[]> {
  const { value, secrets: s } = await loadYamlDoc(file, from);
  secrets.push(...s);
  if (value === null || value === undefined) throw new InputError('playbook is empty: expected a list of plays', { file, line: 1, col: 1 });
  if (!Array.isArray(value)) {
    throw new InputError('a playbook must be a list of plays (each starting with `- name:` / `hosts:`)', posOf(value) ?? { file, line: 1, col: 1 });
  }
  const plays: Play[] = [];
  for (const [i, entry] of (value as unknown[]).entries()) {
    const where = posOf(value, i) ?? posFallback(file);
    // ansible.builtin.import_playbook / ansible.legacy.import_playbook are import_playbook
    if (isRecord(entry)) {
      for (const fq of ['ansible.builtin.import_playbook', 'ansible.legacy.import_playbook']) {
        if (fq in entry && !('import_playbook' in entry)) {
          entry.import_playbook = entry[fq];
          delete entry[fq];
        }
      }
    }
    checkPlayEntry(entry, where, file);
    if ('import_playbook' in entry) {
      // a template in the file name is rendered with the entry's vars and -e, as ansible-core does
      const named = String(entry.import_playbook);
      const scope = { ...(isRecord(entry.vars) ? entry.vars : {}), ...(opts.extraVars ?? {}), playbook_dir: path.dirname(file) };
      const rendered = Templar.isTemplated(named) ? await templar.renderString(named, scope, { where: posOf(entry, 'import_playbook') ?? where }) : named;
      const target = path.resolve(path.dirname(file), String(rendered));
      if (stack.includes(target)) throw new InputError(`import_playbook cycle: ${[...stack, target].map((f) => path.basename(f)).join(' → ')}`, where);
      const imported = await loadPlays(target, opts, [...stack, target], secrets, where);
      const extra = isRecord(entry.vars) ? entry.vars : {};
      for (const p of imported) plays.push({ ...p, vars: { ...p.vars, ...extra } });
      continue;
    }
    plays.push(await normalisePlay(entry, file, i, opts, secrets, stack));
  }
  return plays;
}

/**
 * Check one entry of a playbook: a play (an unknown key is reported as that, with the nearest
 * known key) or an `import_playbook` entry.
 */
function checkPlayEntry(entry: unknown, where: SourcePos, file: string): asserts entry is Obj {
  if (!isRecord(entry)) throw new InputError('a play must be a map (`- hosts: …` with `tasks:`), or `- import_playbook: file.yml`', where);
  const isImport = 'import_playbook' in entry;
  const allowed = isImport ? Object.keys((importEntrySchema().properties ?? {}) as Obj) : playKeys();
  for (const k of Object.keys(entry)) {
    if (allowed.includes(k)) continue;
    const near = closest(k, allowed);
    const what = isImport ? 'import_playbook entry' : 'play';
    const hint = near.length ? `did you mean '${near[0]}'?` : `a ${what} accepts: ${allowed.join(', ')}`;
    throw new InputError(`${what}: unknown key '${k}'${!isImport && (k in TASK_KEYWORDS || k.startsWith('with_')) ? ' (a task keyword: put it on a task under `tasks:`)' : ''}`, posOf(entry, k) ?? where, hint);
  }
  if (!isImport && !('hosts' in entry)) throw new InputError("play: missing required key 'hosts'", where, 'add `hosts: <pattern>` (e.g. `hosts: all` or `hosts: localhost`)');
  validateOrThrow(isImport ? importEntrySchema() : playEntrySchema(), withoutNulls(entry), isImport ? 'import_playbook' : 'play', { root: entry, fallbackPos: where ?? posFallback(file) });
}

async function normalisePlay(raw: Obj, file: string, index: number, opts: LoadOptions, secrets: string[], stack: string[]): Promise<Play> {
  const baseDir = path.dirname(file);
  const pos = posOf(raw) ?? posFallback(file);
  const tags = toList(raw.tags);
  const roles = roleCollector(path.dirname(stack[0] ?? file), (values) => secrets.push(...values));
  checkDebugger(raw);
  checkConnection(raw);
  if (raw.strategy === 'debug') throw new InputError("strategy: 'debug' (Ansible's task debugger) is not supported by kplay", posOf(raw, 'strategy'), 'remove it; run with -vv to see each result');
  // ANSIBLE_ANY_ERRORS_FATAL / any_errors_fatal in ansible.cfg: the default of plays, blocks and tasks
  const inherit = inheritedKeywords(raw, setting('anyErrorsFatal') ? { ...NOTHING_INHERITED, anyErrorsFatal: true } : NOTHING_INHERITED, knownAction(opts));
  const scope: Scope = { baseDir, tags, blockVars: [], stack, handler: false, roles, inherit };
  const serial = raw.serial === undefined ? undefined : Array.isArray(raw.serial) ? (raw.serial as (number | string)[]) : [raw.serial as number | string];
  // ansible-core names a play without `name:` after its hosts (`Play.get_name`): `PLAY [web,db]`
  const name = typeof raw.name === 'string' ? raw.name : Array.isArray(raw.hosts) && raw.hosts.every((h) => typeof h === 'string') ? raw.hosts.join(',') : typeof raw.hosts === 'string' && raw.hosts !== '' ? raw.hosts : `play ${index + 1}`;
  if (raw.vars !== undefined) templar.check(raw.vars, { where: posOf(raw, 'vars') });
  const { vars: promptVars, prompts } = varsPrompt(raw);
  const { files: varsFiles, vars: filesVars } = await loadVarsFiles(raw, baseDir, opts, secrets, { ...promptVars, ...(isRecord(raw.vars) ? raw.vars : {}) });
  const section = async (key: string, handler = false): Promise<TaskNode[]> => {
    const list = raw[key];
    if (list === undefined || list === null) return [];
    return normaliseList(list as unknown[], { ...scope, handler }, opts);
  };
  const handlers = await section('handlers', true);
  const preTasks = await section('pre_tasks');
  // `roles:` run after pre_tasks (and their handlers), before tasks, as in Ansible.
  const roleBlocks: TaskNode[] = [];
  if (raw.roles !== undefined && raw.roles !== null) {
    if (!Array.isArray(raw.roles)) throw new InputError('`roles` must be a list of role names or `{role: name, ...}` entries', posOf(raw, 'roles'));
    for (const [i, entry] of (raw.roles as unknown[]).entries()) {
      const where = posOf(raw.roles, i) ?? pos;
      const dep = parseRoleEntry(entry, where);
      const c: TaskCommon = { ...common(roleEntryKeywords(dep, d0(entry)), where, scope, opts), name: undefined };
      const node = await expandRole({ name: dep.name, from: {}, useVars: dep.useVars, params: dep.params, public: true, allowDuplicates: isRecord(entry) && entry.allow_duplicates === true }, c, scope, opts, where, isRecord(entry) ? entry : undefined);
      if (node) roleBlocks.push(node);
    }
  }
  const tasks = [...roleBlocks, ...(await section('tasks'))];
  const play: Play = {
    name,
    hosts: raw.hosts as string | string[],
    gatherFacts: staticBool(raw, 'gather_facts') ?? setting('gathering') !== 'explicit',
    order: await playOrder(raw, { ...promptVars, ...(isRecord(raw.vars) ? raw.vars : {}), ...filesVars, ...(opts.extraVars ?? {}), playbook_dir: baseDir }, pos),
    noEffect: Object.keys(raw).filter((k) => NO_EFFECT.has(k)),
    serial,
    maxFailPercentage: typeof raw.max_fail_percentage === 'number' ? raw.max_fail_percentage : undefined,
    anyErrorsFatal: inherit.anyErrorsFatal === true,
    forceHandlers: staticBool(raw, 'force_handlers') ?? setting('forceHandlers'),
    prompts,
    vars: { ...promptVars, ...(isRecord(raw.vars) ? raw.vars : {}) },
    varsFiles,
    varsFromFiles: filesVars,
    tags,
    preTasks,
    tasks,
    postTasks: await section('post_tasks'),
    handlers: [...checkedHandlers(handlers), ...roles.handlers],
    publicRoles: roles.publicRoles,
    baseDir,
    pos,
  };
  // keywords with no effect on tasks and blocks (post_tasks included) are said with the play's
  play.noEffect = [...new Set([...play.noEffect, ...roles.noEffect])];
  checkNotifications(play);
  return play;
}

const ORDERS: readonly Play['order'][] = ['inventory', 'reverse_inventory', 'sorted', 'reverse_sorted', 'shuffle'];

/** A play's `order`, a template rendered with the play's vars, vars_files and -e (as ansible-core renders play keywords before the play). */
async function playOrder(raw: Obj, vars: Obj, pos: SourcePos): Promise<Play['order']> {
  if (raw.order === undefined || raw.order === null) return 'inventory';
  const where = posOf(raw, 'order') ?? pos;
  const value = typeof raw.order === 'string' && Templar.isTemplated(raw.order) ? await templar.renderString(raw.order, vars, { where }) : raw.order;
  const found = ORDERS.find((o) => o === value);
  if (found === undefined) throw new InputError(`play.order: must be one of ${ORDERS.map((o) => `"${o}"`).join(', ')}; got '${String(value)}'`, where);
  return found;
}

/**
 * A play's `vars_files`, as ansible-core reads them: each entry a file, or a list of files of
 * which the first found is read; an entry is templated with the play's variables, the files read
 * so far and the extra vars (one with an undefined variable is skipped with ansible-core's
 * warning); a file that is not there is skipped, as ansible-playbook 2.19 skips it.
 */
async function loadVarsFiles(raw: Obj, baseDir: string, opts: LoadOptions, secrets: string[], playVars: Obj): Promise<{ files: string[]; vars: Obj }> {
  const entries = Array.isArray(raw.vars_files) ? (raw.vars_files as unknown[]) : [];
  const files: string[] = [];
  const vars: Obj = {};
  for (const [i, entry] of entries.entries()) {
    const where = posOf(raw.vars_files, i) ?? posOf(raw) ?? posFallback(baseDir);
    const candidates = Array.isArray(entry) ? (entry as unknown[]) : [entry];
    try {
      for (const c of candidates) {
        if (typeof c !== 'string') throw new InputError(`Invalid \`vars_files\` value of type '${Array.isArray(c) ? 'list' : typeof c}'.`, where, 'A `vars_files` value should either be a string or list of strings.');
        const name = Templar.isTemplated(c) ? await templar.renderString(c, { ...playVars, ...vars, ...(opts.extraVars ?? {}), playbook_dir: baseDir }, { where }) : c;
        const vfPath = path.resolve(baseDir, name);
        if (!existsSync(vfPath)) continue;
        const { value, secrets: s } = await loadYamlDoc(vfPath, where);
        secrets.push(...s);
        files.push(name);
        if (value === null) break;
        if (!isRecord(value)) throw new InputError('a vars file must be a map of variables', posOf(value) ?? { file: vfPath, line: 1, col: 1 });
        templar.check(value);
        Object.assign(vars, value);
        break;
      }
    } catch (e) {
      if (!(e instanceof UndefinedInputError)) throw e;
      opts.warn?.(`skipping vars_files item due to an undefined variable (${formatPos(where)})`);
    }
  }
  return { files, vars };
}

/**
 * `vars_prompt`: each variable is a play variable with its `default` (an `-e name=…` wins, as
 * extra vars do; without a default it is the empty string), and a prompt the run asks on a
 * terminal before the play (src/cli/prompt.ts); without a terminal the default stays, as in Ansible.
 */
function varsPrompt(raw: Obj): { vars: Obj; prompts: VarPrompt[] } {
  const list = raw.vars_prompt;
  if (list === undefined || list === null) return { vars: {}, prompts: [] };
  const out: Obj = {};
  const prompts: VarPrompt[] = [];
  for (const [i, p] of (list as Obj[]).entries()) {
    const where = posOf(list, i);
    if (p.encrypt !== undefined && p.encrypt !== null) throw new InputError(`vars_prompt '${String(p.name)}': \`encrypt\` (hashing the answer) is not supported by kplay`, posOf(p, 'encrypt') ?? where, 'hash the value with the password_hash filter where it is used');
    if (p.default !== undefined) templar.check(p.default, { where: posOf(p, 'default') ?? where });
    out[String(p.name)] = p.default ?? '';
    prompts.push({
      name: String(p.name),
      prompt: typeof p.prompt === 'string' && p.prompt !== '' ? p.prompt : String(p.name),
      private: yaml11Bool(p.private) ?? true,
      ...(p.default !== undefined && p.default !== null ? { default: p.default } : {}),
      confirm: yaml11Bool(p.confirm) === true,
    });
  }
  return { vars: out, prompts };
}

/** Every `notify:` of the play names a handler (or a `listen` topic) it has. */
function checkNotifications(play: Play): void {
  const known = new Set<string>();
  for (const h of play.handlers) {
    if (h.name) known.add(h.name);
    for (const l of h.listen) known.add(l);
  }
  const visit = (nodes: TaskNode[]): void => {
    for (const n of nodes) {
      if (n.kind === 'task') {
        for (const name of n.notify) {
          if (!Templar.isTemplated(name) && !known.has(name)) {
            const hint = known.size ? `known handlers: ${[...known].join(', ')}` : 'this play has no handlers';
            throw new InputError(`notify: no handler named '${name}'`, n.pos, hint);
          }
        }
      } else if (n.kind === 'block') {
        visit(n.block);
        visit(n.rescue);
        visit(n.always);
      }
    }
  };
  visit(play.preTasks);
  visit(play.tasks);
  visit(play.postTasks);
  visit(play.handlers);
}
