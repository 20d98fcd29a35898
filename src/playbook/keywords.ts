/**
 * Ansible's play/block/task keywords as the loader reads them: YAML 1.1 booleans (`no`, `on`),
 * templated keyword values, keywords inherited from the play and blocks (`no_log`, `environment`,
 * `module_defaults`, …), `with_<lookup>` loops, `action:`/`local_action:`, `args:`, `delegate_to`,
 * and fully qualified module names (see `names.ts`) turned into kplay's short names.
 */
import { InputError, type SourcePos } from '../load/errors.js';
import { copyPosRenamed, posOf } from '../load/yaml.js';
import { closest } from '../load/suggest.js';
import { REGISTRY, Templar, templar } from '../template/index.js';
import { actionGroup, resolveAction } from './names.js';
import { BLOCK_KEYS, TASK_KEYWORDS } from './syntax.js';
import type { Inherited } from './types.js';
import { isRecord } from '../core/shape.js';

export type { Inherited };

type Obj = Record<string, unknown>;

/** YAML 1.1's booleans (PyYAML, as Ansible reads its files): the value, or undefined when `v` is not one. */
export function yaml11Bool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string') return undefined;
  if (/^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/.test(v)) return true;
  if (/^(?:no|No|NO|false|False|FALSE|off|Off|OFF)$/.test(v)) return false;
  return undefined;
}

/**
 * A boolean keyword: a boolean (YAML 1.1 spellings included), or a template rendered at run time
 * (returned as the string, syntax-checked). Anything else is an InputError at the key.
 */
export function boolKeyword(raw: Obj, key: string): boolean | string | undefined {
  const v = raw[key];
  if (v === undefined || v === null) return undefined;
  const b = yaml11Bool(v);
  if (b !== undefined) return b;
  if (typeof v === 'string' && Templar.isTemplated(v)) {
    templar.check(v, { where: posOf(raw, key) });
    return v;
  }
  throw new InputError(`${key}: expected a boolean (true/false, yes/no, on/off) or a template, got ${JSON.stringify(v)}`, posOf(raw, key), `write \`${key}: true\` or \`${key}: "{{ condition }}"\``);
}

/** A boolean keyword that cannot be templated (play structure: `gather_facts`). */
export function staticBool(raw: Obj, key: string): boolean | undefined {
  const v = boolKeyword(raw, key);
  if (typeof v === 'string') throw new InputError(`${key} cannot be templated here`, posOf(raw, key), `write \`${key}: true\` or \`${key}: false\``);
  return v;
}

/** Nothing inherited (the top of a play). */
export const NOTHING_INHERITED: Inherited = { environment: [], moduleDefaults: [] };

/** The keywords of `raw` (a play, block or task) on top of what it inherits. */
export function inheritedKeywords(raw: Obj, parent: Inherited, known: (short: string) => boolean): Inherited {
  const env = raw.environment;
  if (env !== undefined && env !== null) {
    const list = Array.isArray(env) ? env : [env];
    for (const e of list) {
      if (!isRecord(e) && !(typeof e === 'string' && Templar.isTemplated(e))) throw new InputError('environment: expected a map of variables (or a template giving one)', posOf(raw, 'environment'), 'write `environment: {NAME: value}`');
      templar.check(e, { where: posOf(raw, 'environment') });
    }
  }
  const md = raw.module_defaults;
  const defaults: Obj[] = [];
  if (md !== undefined && md !== null) {
    for (const d of Array.isArray(md) ? md : [md]) defaults.push(moduleDefaultsMap(d, raw, known));
  }
  const timeout = raw.timeout;
  const throttle = raw.throttle;
  if (typeof throttle === 'string') templar.check(throttle, { where: posOf(raw, 'throttle') });
  const ignore = raw.ignore_errors;
  return {
    checkMode: boolKeyword(raw, 'check_mode') ?? parent.checkMode,
    noLog: boolKeyword(raw, 'no_log') ?? parent.noLog,
    diff: boolKeyword(raw, 'diff') ?? parent.diff,
    ignoreErrors: ignore !== undefined && ignore !== null ? (yaml11Bool(ignore) ?? ignore) : parent.ignoreErrors,
    ignoreUnreachable: boolKeyword(raw, 'ignore_unreachable') ?? parent.ignoreUnreachable,
    runOnce: boolKeyword(raw, 'run_once') ?? parent.runOnce,
    timeout: typeof timeout === 'number' ? timeout : parent.timeout,
    anyErrorsFatal: staticBool(raw, 'any_errors_fatal') ?? parent.anyErrorsFatal,
    throttle: typeof throttle === 'number' || typeof throttle === 'string' ? throttle : parent.throttle,
    environment: env !== undefined && env !== null ? [...parent.environment, ...(Array.isArray(env) ? env : [env])] : parent.environment,
    moduleDefaults: defaults.length ? [...parent.moduleDefaults, ...defaults] : parent.moduleDefaults,
    ...(raw.notify !== undefined && raw.notify !== null ? { notify: notifyList(raw.notify) } : parent.notify ? { notify: parent.notify } : {}),
  };
}

/** `notify:` as a list (a list, or a comma-separated string). */
function notifyList(v: unknown): string[] {
  return (Array.isArray(v) ? v.map(String) : String(v).split(',')).map((s) => s.trim()).filter(Boolean);
}

/** One `module_defaults` map with its module keys resolved to kplay's names (groups kept as written). */
function moduleDefaultsMap(d: unknown, raw: Obj, known: (short: string) => boolean): Obj {
  const where = posOf(raw, 'module_defaults');
  if (!isRecord(d)) throw new InputError('module_defaults: expected a map of module (or `group/<name>`) → default arguments', where, 'write `module_defaults: {kubernetes.core.k8s: {kubeconfig: …}}`');
  const out: Obj = {};
  for (const [k, v] of Object.entries(d)) {
    const at = posOf(d, k) ?? where;
    if (!isRecord(v) && !(typeof v === 'string' && Templar.isTemplated(v))) throw new InputError(`module_defaults: the defaults of '${k}' must be a map of arguments`, at);
    templar.check(v, { where: at });
    if (k.startsWith('group/')) {
      out[k] = v;
      continue;
    }
    const r = resolveAction(k, known);
    // like Ansible, defaults for a module that is not used are harmless: only kplay's modules can match
    if (r.kind === 'action') out[r.name] = v;
    else if (r.kind === 'unknown') throw new InputError(`module_defaults: unknown module '${k}'`, at, '`kplay modules` lists the modules; action groups are written `group/kubernetes.core.k8s`');
  }
  return out;
}

/**
 * The default arguments of `module` from `module_defaults` maps (outer → inner), as ansible-core
 * merges them: the maps are merged key by key (an inner entry replaces an outer one), then the
 * groups that contain the module apply, then the module's own entry. Undefined when none apply.
 */
export function moduleDefaultsFor(maps: readonly Obj[], module: string): unknown[] | undefined {
  if (maps.length === 0) return undefined;
  const merged: Obj = {};
  for (const m of maps) Object.assign(merged, m);
  const out: unknown[] = [];
  for (const [k, v] of Object.entries(merged)) if (k.startsWith('group/') && actionGroup(k)?.includes(module)) out.push(v);
  if (merged[module] !== undefined) out.push(merged[module]);
  return out.length ? out : undefined;
}

/** `with_<lookup>` keys of a task: the lookup name, or undefined when there is none. */
export function withLookup(raw: Obj): { key: string; lookup: string } | undefined {
  const keys = Object.keys(raw).filter((k) => k.startsWith('with_'));
  if (keys.length === 0) return undefined;
  if (keys.length > 1) throw new InputError(`a task can have one loop: ${keys.join(', ')}`, posOf(raw, keys[1] ?? ''));
  const key = keys[0] as string;
  if ('loop' in raw) throw new InputError(`a task cannot have both \`loop\` and \`${key}\``, posOf(raw, key), `use \`loop: "{{ query('${key.slice(5)}', …) }}"\` or \`${key}\` alone`);
  const lookup = key.slice('with_'.length);
  if (raw[key] === null || raw[key] === undefined) throw new InputError(`you must specify a value when using ${key}`, posOf(raw, key), `give the items: \`${key}: [a, b]\` or \`${key}: "{{ list }}"\``);
  if (!REGISTRY.lookups.has(lookup)) {
    const near = closest(lookup, [...REGISTRY.lookups.keys()].filter((n) => !n.includes('.')));
    throw new InputError(`${key}: there is no lookup '${lookup}'`, posOf(raw, key), near.length ? `did you mean with_${near[0]}?` : 'with_<lookup> takes a lookup name: with_items, with_dict, with_fileglob, …');
  }
  templar.check(raw[key], { where: posOf(raw, key) });
  return { key, lookup };
}

/** Keywords any task key may be besides its action. */
function isKeyword(k: string): boolean {
  return k in TASK_KEYWORDS || BLOCK_KEYS.has(k) || k.startsWith('with_');
}

/** The escapes ansible-core decodes in a `key=value` token (`\\n`, `\\t`, `\\"`, `\\xHH`, `\\uHHHH`, …). */
const ESCAPE = /\\(U[0-9a-fA-F]{8}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\\'"abfnrtv])/g;
const SIMPLE_ESCAPES: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

function decodeEscapes(s: string): string {
  return s.replace(ESCAPE, (_m, e: string) => SIMPLE_ESCAPES[e] ?? String.fromCodePoint(Number.parseInt(e.slice(1), 16)));
}

/** ansible-core's `unquote`: one pair of matching outer quotes removed. */
function unquote(s: string): string {
  return s.length > 1 && (s[0] === '"' || s[0] === "'") && s[s.length - 1] === s[0] && s[s.length - 2] !== '\\' ? s.slice(1, -1) : s;
}

/** Split a free-form string into tokens as ansible-core's `split_args`: quotes and `{{ … }}` / `{% … %}` keep spaces inside a token. */
function splitArgs(s: string): string[] {
  const tokens: string[] = [];
  let cur = '';
  let quote = '';
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const two = s.slice(i, i + 2);
    if (!quote && (two === '{{' || two === '{%')) depth++;
    if (!quote && (two === '}}' || two === '%}') && depth > 0) depth--;
    if (quote) {
      if (ch === '\\' && i + 1 < s.length) {
        cur += ch + (s[i + 1] as string);
        i++;
        continue;
      }
      if (ch === quote) quote = '';
      cur += ch;
      continue;
    }
    if ((ch === '"' || ch === "'") && depth === 0) {
      quote = ch;
      cur += ch;
      continue;
    }
    if (/\s/.test(ch) && depth === 0) {
      if (cur) tokens.push(cur);
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur) tokens.push(cur);
  return tokens;
}

/**
 * Ansible's `key=value key2="v 2"` free-form arguments, as ansible-core's `parse_kv` reads them:
 * a token splits at its first `=` not escaped with `\\` (past the first character), the key
 * trimmed and the value unquoted, escapes (`\\n`, `\\"`) decoded; the pairs whose key `take`s are
 * returned, the other tokens as written are the rest (`_raw_params`). Keys may be templated
 * (`"{{ k }}={{ v }}"`).
 */
export function parseKv(s: string, take: (key: string) => boolean = () => true): { kv: Obj; rest: string } {
  const kv: Obj = {};
  const rest: string[] = [];
  for (const token of splitArgs(s)) {
    const x = decodeEscapes(token);
    let at = -1;
    for (let i = x.indexOf('=', 1); i > 0; i = x.indexOf('=', i + 1)) {
      if (x[i - 1] !== '\\') {
        at = i;
        break;
      }
    }
    const key = at > 0 ? x.slice(0, at).trim() : '';
    if (at < 0 || !take(key)) {
      rest.push(token);
      continue;
    }
    kv[key] = unquote(x.slice(at + 1).trim());
  }
  return { kv, rest: rest.join(' ') };
}

/**
 * A task with its action key in kplay's terms: a fully qualified name (`ansible.builtin.debug`,
 * `kubernetes.core.k8s`) becomes the short one; `action:`/`local_action:` become the module key;
 * `args:` joins the module's arguments. Returns `raw` itself when nothing changes (positions are
 * kept for the renamed keys). A module kplay does not implement is an InputError naming it.
 */
export function canonicalTask(raw: Obj, known: (short: string) => boolean): Obj {
  const rename = new Map<string, string>();
  for (const k of Object.keys(raw)) {
    if (isKeyword(k) || k === 'action' || k === 'local_action') continue;
    const r = resolveAction(k, known);
    if (r.kind === 'unsupported') throw new InputError(r.why, posOf(raw, k), r.hint);
    if (r.kind === 'action' && r.name !== k) {
      if (r.name in raw) throw new InputError(`task names the same action twice: '${k}' and '${r.name}'`, posOf(raw, k));
      rename.set(k, r.name);
    }
  }
  const actionKey = 'action' in raw ? 'action' : 'local_action' in raw ? 'local_action' : undefined;
  if (rename.size === 0 && actionKey === undefined) return raw;
  const out: Obj = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k === actionKey) continue;
    out[rename.get(k) ?? k] = v;
  }
  if (actionKey) {
    if ('action' in raw && 'local_action' in raw) throw new InputError('a task cannot have both `action` and `local_action`', posOf(raw, 'local_action'));
    const { module, args } = actionForm(raw[actionKey], posOf(raw, actionKey));
    if (Templar.isTemplated(module)) {
      // ansible-core templates the action when the task runs (Task._post_validate_args): kept as written
      templar.check(module, { where: posOf(raw, actionKey) });
      const templated: TemplatedAction = { module, args };
      out[TEMPLATED_ACTION] = templated;
      rename.set(actionKey, TEMPLATED_ACTION);
      copyPosRenamed(raw, out, rename);
      return out;
    }
    const r = resolveAction(module, known);
    if (r.kind === 'unsupported') throw new InputError(r.why, posOf(raw, actionKey), r.hint);
    const name = r.kind === 'action' ? r.name : module;
    if (name in out) throw new InputError(`task names the module '${name}' twice (in \`${actionKey}\` and as a key)`, posOf(raw, actionKey));
    out[name] = args;
    rename.set(actionKey, name);
  }
  copyPosRenamed(raw, out, rename);
  return out;
}

/** The key of a canonical task whose `action:` names its module with a template (`action: "{{ m }} k=v"`). */
export const TEMPLATED_ACTION = 'action';

/** A templated `action:`: the module name's template and the arguments as written. */
export interface TemplatedAction {
  module: string;
  args: unknown;
}

/** The templated `action:` of a canonical task (see {@link canonicalTask}), if it has one. */
export function templatedActionOf(raw: Obj): TemplatedAction | undefined {
  const v = raw[TEMPLATED_ACTION];
  return isRecord(v) && typeof v.module === 'string' && Templar.isTemplated(v.module) && 'args' in v ? { module: v.module, args: v.args } : undefined;
}

/** `action: debug msg=hi` / `action: {module: debug, msg: hi}`: the module and its arguments. */
function actionForm(v: unknown, where: SourcePos | undefined): { module: string; args: unknown } {
  if (typeof v === 'string') {
    const m = /^\s*(\{\{[^]*?\}\}\S*|\S+)\s*([^]*)$/.exec(v);
    if (!m?.[1]) throw new InputError('`action` needs a module name', where, 'write `action: <module> key=value …` or `action: {module: <name>, …}`');
    const rest = m[2] ?? '';
    return { module: m[1], args: rest.trim() === '' ? {} : rest };
  }
  if (isRecord(v) && typeof v.module === 'string') {
    const { module, ...args } = v;
    return { module: module as string, args };
  }
  throw new InputError('`action` needs a module name', where, 'write `action: <module> key=value …` or `action: {module: <name>, …}`');
}

/** The hosts `delegate_to` may name in kplay: the controller, or (`self`) the cluster the task runs for. */
export function delegateProblem(d: string, self: string | undefined): string | undefined {
  if (d === 'localhost' || d === '127.0.0.1' || d === '::1' || d === self) return undefined;
  return `delegate_to: '${d}' is not supported: kplay runs every task on the controller for the cluster it targets`;
}

/** What to do instead of delegating to another host. */
export const DELEGATE_HINT = 'use `delegate_to: localhost` (the same thing in kplay), or target that cluster with the play\'s `hosts:` / `run_once`';

/**
 * `delegate_to`: the controller (or the cluster itself) runs as usual; another host is refused.
 * A template is rendered (and checked) when the task runs: returned to be kept on the task.
 */
export function checkDelegate(raw: Obj): string | undefined {
  const d = raw.delegate_to;
  if (d === undefined || d === null) return undefined;
  if (typeof d !== 'string') throw new InputError('delegate_to: expected a host name', posOf(raw, 'delegate_to'));
  if (d === '{{ inventory_hostname }}' || d === '{{inventory_hostname}}') return undefined;
  if (Templar.isTemplated(d)) {
    templar.check(d, { where: posOf(raw, 'delegate_to') });
    return d;
  }
  const problem = delegateProblem(d, undefined);
  if (problem) throw new InputError(problem, posOf(raw, 'delegate_to'), DELEGATE_HINT);
  return undefined;
}

/** `connection: kubernetes.core.kubectl` runs tasks inside containers: refused; other connections are accepted with no effect. */
export function checkConnection(raw: Obj): void {
  const c = raw.connection;
  if (typeof c !== 'string' || !/^(?:(?:kubernetes\.core|community\.kubernetes)\.)?kubectl$/.test(c)) return;
  throw new InputError(
    `connection: '${c}' is not supported by kplay: it runs tasks inside running containers (kubectl exec)`,
    posOf(raw, 'connection'),
    'kplay runs every task on the controller against the Kubernetes API: remove the keyword, and run in-container commands as a Job (kubernetes.core.k8s)',
  );
}

/** `debugger:` is refused unless `never`. */
export function checkDebugger(raw: Obj): void {
  const d = raw.debugger;
  if (d === undefined || d === null || d === 'never') return;
  throw new InputError(`debugger: '${String(d)}': Ansible's interactive task debugger is not supported by kplay`, posOf(raw, 'debugger'), 'remove the keyword; run with -vv to see each result');
}
