/**
 * Derived secrets. Masking works on exact strings, so a value computed from a secret
 * (`{{ api_token | upcase }}`, `{{ password | split: '' | join: '-' }}`, a secret-derived object
 * name, a `set_fact` built from one) would be printed in clear. Every templated string of a
 * task's arguments that reads a secret — a variable whose name looks secret, or whose value is
 * or contains a registered secret — has its rendered result registered as a secret too, so every
 * channel (text, JSON events, diffs, errors, run records) masks it. Facts set from such values
 * carry the taint on: their values are registered, so templates reading them are tainted in turn.
 *
 * Declared secrets (provenance, see `src/report/provenance.ts`) are tracked apart: a templated
 * argument that reads one — directly, through a lazily rendered variable, a fact or registered
 * result derived from one, or a loop item — is a {@link TaintedLeaf}; what its `{{ … }}` parts
 * render to is declared too, so the taint follows the value into facts and later tasks. The
 * executor refuses tainted leaves that derive from kplay's own secrets (`!secret`) where they
 * cannot be masked, and warns of the others there (`sinks.ts`).
 */
import { SECRET_NAME, type Masker } from '../core/mask.js';
import type { Origins } from '../core/provenance.js';
import { Templar } from '../template/engine.js';
import { templar } from '../template/index.js';
import { rawTemplateOf } from './lazyvars.js';

type Obj = Record<string, unknown>;
type Seg = string | number;

/** A templated argument that reads a declared secret. */
export interface TaintedLeaf {
  /** Where the template is in the (rendered) arguments; `[]` for a free-form string. */
  path: Seg[];
  /** The variables it read that hold or derive from declared secrets (`db_password`, `dsn (from db_password)`). */
  sources: string[];
  /** What the tainted `{{ … }}` parts rendered to (strings); a value under `path` holding one of them is secret-derived. */
  parts: string[];
  /** It derives from kplay's own secret (a `!secret` scalar): refused where it cannot be masked; the others are only warned of. */
  own?: true;
  /**
   * Tainted only because a variable it reads is *named* like a password or token ({@link STRONG_SECRET_NAME}),
   * not declared secret: refused only where a secret is never meant to be (`BY_NAME_KINDS` in sinks.ts).
   */
  byName?: true;
}

/**
 * Variable names that say the value is a password, token or key (`db_password`, `api_token`,
 * `ssh_private_key`) — narrower than the masking heuristic `SECRET_NAME`, which also takes
 * `tls_secret` or `aws_credentials`, names that usually hold the *name* of a Secret object.
 */
export const STRONG_SECRET_NAME = /(pass(word|wd)|token|api[_-]?key|private[_-]?key)$/i;

/** The variables named like a password or token that `tpl` reads, directly or through variables holding templates. */
function namedSources(tpl: string, vars: Obj, seen: Set<string> = new Set(), depth = 0): string[] {
  if (depth > 8) return [];
  const out = new Set<string>();
  for (const segs of templar.variablePathsOf(tpl)) {
    const name = pathText(segs);
    if (segs.some((s) => typeof s === 'string' && STRONG_SECRET_NAME.test(s))) {
      out.add(name);
      continue;
    }
    const root = String(segs[0]);
    const raw = seen.has(root) ? undefined : rawTemplateOf(vars, root);
    if (raw === undefined) continue;
    seen.add(root);
    const inner = new Set<string>();
    for (const t of templatesUnder(rawAt(raw, segs.slice(1)))) for (const x of namedSources(t, vars, seen, depth + 1)) inner.add(x);
    seen.delete(root);
    if (inner.size) out.add(`${name} (from ${[...inner].join(', ')})`);
  }
  return [...out];
}

/** What the taint pass needs besides the template: the task's variables and where to record. */
export interface TaintScope {
  vars: Obj;
  masker: Masker;
  /** The cluster whose variables these are (variables marked secret as a whole are per cluster). */
  cluster: string;
}

/**
 * Register the string leaves of a derived value, except those that carry no secret and would
 * mask ordinary output everywhere: short strings, booleans, small numbers (`{{ password is defined }}`
 * renders `true`; `{{ token | size }}` renders `32`).
 */
function addDerived(value: unknown, masker: Masker, depth = 0): void {
  if (depth > 32) return;
  if (typeof value === 'string') {
    if (!trivial(value)) masker.add(value);
  } else if (Array.isArray(value)) for (const v of value) addDerived(v, masker, depth + 1);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value as Obj)) addDerived(v, masker, depth + 1);
}

/** Strings that carry no secret even when computed from one (`True`, `32`, `abc`). */
function trivial(value: string): boolean {
  const s = value.trim();
  return s.length < 6 || /^(true|false|null|none|yes|no)$/i.test(s) || /^-?\d{1,9}(\.\d+)?$/.test(s);
}

/** The value at `segs` in `vars`; undefined when absent or when rendering a lazy variable fails. */
function valueAt(vars: Obj, segs: readonly Seg[]): unknown {
  let value: unknown = vars;
  try {
    for (const s of segs) {
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<string | number, unknown>)[s];
    }
  } catch {
    return undefined; // a lazily rendered variable that fails to render: the render reports it
  }
  return value;
}

/** Whether template `tpl` reads a secret from `vars`: a variable path ending in a secret-looking name, or whose value is or holds a secret. */
function readsSecret(tpl: string, vars: Obj, masker: Masker): boolean {
  for (const segs of templar.variablePathsOf(tpl)) {
    if (segs.some((s) => typeof s === 'string' && SECRET_NAME.test(s))) return true;
    if (masker.isSecret(valueAt(vars, segs))) return true;
  }
  return false;
}

/** `a.b[0]['x.y']` for a variable path. */
export function pathText(segs: readonly Seg[]): string {
  return segs.map((s, i) => (typeof s === 'number' ? `[${s}]` : /^[A-Za-z_][\w-]*$/.test(s) ? (i === 0 ? s : `.${s}`) : `['${s}']`)).join('');
}

/** Every templated string under a raw (unrendered) value, bounded (200 templates, 5000 values looked at). */
function templatesUnder(raw: unknown): string[] {
  const out: string[] = [];
  let budget = 5000;
  const visit = (v: unknown, depth: number): void => {
    if (depth > 32 || out.length > 200 || budget-- <= 0) return;
    if (typeof v === 'string') {
      if (Templar.isTemplated(v)) out.push(v);
    } else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v as Obj)) visit(x, depth + 1);
  };
  visit(raw, 0);
  return out;
}

/** The raw value at `segs` under a raw variable (as far as the path goes through maps and lists). */
function rawAt(raw: unknown, segs: readonly Seg[]): unknown {
  let v = raw;
  for (const s of segs) {
    if (v === null || typeof v !== 'object' || typeof v === 'string') return v;
    const next = (v as Record<string | number, unknown>)[s];
    if (next === undefined) return v;
    v = next;
  }
  return v;
}

function describe(name: string, origins: Origins): string {
  const other = origins.filter((o) => o !== name);
  return other.length ? `${name} (from ${other.join(', ')})` : name;
}

/**
 * The declared secrets template `tpl` reads, as descriptions of the variables (`[]`: none): a
 * variable marked secret as a whole (a `no_log` result, a fact derived from a secret), a value
 * holding a declared secret, or a lazily rendered variable whose own templates read one.
 * `own.value` is set when one of them is or derives from kplay's own secret (`!secret`).
 */
export function declaredSources(tpl: string, scope: TaintScope, seen: Set<string> = new Set(), depth = 0, own: { value: boolean } = { value: false }): string[] {
  const prov = scope.masker.provenance;
  if (prov.empty || depth > 8) return [];
  const out = new Set<string>();
  for (const segs of templar.variablePathsOf(tpl)) {
    const name = pathText(segs);
    const root = String(segs[0]);
    const whole = prov.varOrigins(scope.cluster, root);
    if (whole) {
      if (prov.varOwn(scope.cluster, root)) own.value = true;
      out.add(describe(name, whole));
      continue;
    }
    const value = valueAt(scope.vars, segs);
    const held = prov.originsIn(value);
    if (held) {
      if (prov.ownIn(value)) own.value = true;
      out.add(describe(name, held));
      continue;
    }
    // a variable holding templates (`dsn: "postgres://app:{{ db_password }}@db"`) reads what they read
    const raw = seen.has(root) ? undefined : rawTemplateOf(scope.vars, root);
    if (raw === undefined) continue;
    seen.add(root);
    const inner = new Set<string>();
    for (const t of templatesUnder(rawAt(raw, segs.slice(1)))) for (const s of declaredSources(t, scope, seen, depth + 1, own)) inner.add(s);
    seen.delete(root);
    if (inner.size) out.add(`${name} (from ${[...inner].join(', ')})`);
  }
  return [...out];
}

/**
 * The map keys of the variables secret as a whole that `tpl` reads, less their leaf values: the
 * structure of a `no_log` result (`db.resources[0].data.keys()` → `password`, `username`) is not
 * secret, only its values are (Ansible prints the keys; so does kplay).
 */
function structuralNames(tpl: string, scope: TaintScope): Set<string> {
  const keys = new Set<string>();
  const leaves = new Set<string>();
  let budget = 20_000;
  const visit = (v: unknown, depth: number): void => {
    if (budget-- <= 0 || depth > 32) return;
    if (typeof v === 'string' || typeof v === 'number') leaves.add(String(v));
    else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Obj)) {
        keys.add(k);
        visit(x, depth + 1);
      }
    }
  };
  const roots = new Set<string>();
  for (const segs of templar.variablePathsOf(tpl)) {
    const root = String(segs[0]);
    if (roots.has(root) || !scope.masker.provenance.varOrigins(scope.cluster, root)) continue;
    roots.add(root);
    visit(valueAt(scope.vars, [root]), 0);
  }
  for (const l of leaves) keys.delete(l);
  return keys;
}

/** The string leaves of a rendered value that carry something (not `True`, `32`). */
function partsOf(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 32 || out.length > 1000) return out;
  if (typeof value === 'string' || typeof value === 'number') {
    const s = String(value);
    if (!trivial(s)) out.push(s);
  } else if (Array.isArray(value)) for (const v of value) partsOf(v, out, depth + 1);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value as Obj)) partsOf(v, out, depth + 1);
  return out;
}

/** A template that is one variable path and nothing else (`{{ app.definition }}`): its path. */
function singlePath(tpl: string): Seg[] | undefined {
  const m = /^\{\{-?\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*)\s*-?\}\}$/.exec(tpl);
  if (!m?.[1]) return undefined;
  return m[1].split(/\.|(?=\[)/).map((s) => (s.startsWith('[') ? Number(s.slice(1, -1)) : s));
}

/** One templated string: its declared-secret taint, and the masking of what it derives. */
function taintString(raw: string, rendered: unknown, scope: TaintScope, path: Seg[], out: TaintedLeaf[], depth: number): void {
  const { vars, masker } = scope;
  // A map or list given by one variable whose raw value holds templates (`definition: "{{ app_def }}"`):
  // follow the variable's own structure, so that only the fields its templates fill are tainted.
  const single = rendered !== null && typeof rendered === 'object' ? singlePath(raw) : undefined;
  const rawVar = single ? rawTemplateOf(vars, String(single[0])) : undefined;
  if (single && !masker.provenance.varOrigins(scope.cluster, String(single[0]))) {
    // a variable rendered when read: its templates; data (a fact, a result): its values
    const inner = rawVar === undefined ? rendered : rawAt(rawVar, single.slice(1));
    if (inner !== null && typeof inner === 'object') {
      walk(inner, rendered, scope, path, out, depth + 1, { name: pathText(single), data: rawVar === undefined });
      return;
    }
  }
  const outputs = raw.includes('{%') ? undefined : raw.match(/\{\{[\s\S]*?\}\}/g);
  const ownAny = { value: false };
  const declared = declaredSources(raw, scope, new Set(), 0, ownAny);
  const masked = masker.size > 0 && readsSecret(raw, vars, masker);
  if (!declared.length) byName(raw, rendered, outputs, vars, path, out);
  if (!declared.length && !masked) return;
  // Register what each `{{ … }}` that reads a secret renders to, so only the derived part of a
  // longer string is masked ("token ********", not the whole line); with `{% … %}` tags the
  // parts cannot be told apart and the whole rendered value is registered.
  const parts: string[] = [];
  const sources = new Set<string>();
  let own = false;
  const keysOnly = declared.length ? structuralNames(raw, scope) : undefined;
  const derive = (value: unknown, from: string[], fromOwn: boolean): void => {
    if (masked) addDerived(value, masker);
    if (!from.length) return;
    for (const s of from) sources.add(s);
    if (fromOwn) own = true;
    const ps = keysOnly?.size ? partsOf(value).filter((p) => !keysOnly.has(p)) : partsOf(value);
    parts.push(...ps);
    for (const p of ps) masker.addDeclared(p, from, fromOwn);
  };
  if (!outputs) {
    derive(rendered, declared, ownAny.value);
    // with tags, each `{{ … }}` that renders on its own (not one using a `{% for %}` variable) gives
    // a part too, so that a field of a rendered manifest can be told from the rest of the text
    for (const o of declared.length ? (raw.match(/\{\{[\s\S]*?\}\}/g) ?? []) : []) {
      const oOwn = { value: false };
      const from = declaredSources(o, scope, new Set(), 0, oOwn);
      if (!from.length) continue;
      try {
        derive(templar.renderSync(o, vars), from, oOwn.value);
      } catch {
        // bound by a tag of the template: only the whole value is known
      }
    }
  } else {
    for (const o of outputs) {
      const oOwn = { value: false };
      const from = declared.length ? declaredSources(o, scope, new Set(), 0, oOwn) : [];
      if (!from.length && !(masked && readsSecret(o, vars, masker))) continue;
      let value: unknown;
      try {
        value = templar.renderSync(o, vars);
      } catch {
        value = rendered; // rendered as part of the whole string, so this is unexpected: stay safe
      }
      derive(value, from, oOwn.value);
    }
  }
  if (sources.size && parts.length) out.push({ path, sources: [...sources], parts, ...(own ? { own: true as const } : {}) });
}

/** A template reading a variable named like a password or token (no declared secret): a leaf refused only in names, labels and annotations. */
function byName(raw: string, rendered: unknown, outputs: RegExpMatchArray | null | undefined, vars: Obj, path: Seg[], out: TaintedLeaf[]): void {
  const sources = namedSources(raw, vars);
  if (!sources.length) return;
  const parts: string[] = [];
  if (!outputs) partsOf(rendered, parts);
  else {
    for (const o of outputs) {
      if (!namedSources(o, vars).length) continue;
      try {
        partsOf(templar.renderSync(o, vars), parts);
      } catch {
        partsOf(rendered, parts); // rendered as part of the whole string: stay safe
      }
    }
  }
  if (parts.length) out.push({ path, sources, parts, byName: true });
}

/**
 * `via`: the variable whose raw value (`data`: its value, a fact or result, never rendered again)
 * is walked (inside `definition: "{{ app_def }}"`); there a plain value that is a declared secret
 * is tainted too.
 */
function walk(raw: unknown, rendered: unknown, scope: TaintScope, path: Seg[], out: TaintedLeaf[], depth: number, via?: { name: string; data: boolean }): void {
  if (depth > 64) return;
  if (typeof raw === 'string' || typeof raw === 'number') {
    if (typeof raw === 'string' && !via?.data && Templar.isTemplated(raw)) taintString(raw, rendered, scope, path, out, depth);
    else if (via !== undefined) {
      const held = scope.masker.provenance.originsIn(raw);
      if (held) out.push({ path, sources: [describe(via.name, held)], parts: [String(raw)], ...(scope.masker.provenance.ownIn(raw) ? { own: true as const } : {}) });
    }
    return;
  }
  if (Array.isArray(raw)) {
    const r = Array.isArray(rendered) ? rendered : [];
    raw.forEach((x, i) => walk(x, r[i], scope, [...path, i], out, depth + 1, via));
    return;
  }
  if (raw !== null && typeof raw === 'object') {
    const r = rendered !== null && typeof rendered === 'object' && !Array.isArray(rendered) ? (rendered as Obj) : {};
    // keys are not templated (as in Ansible): only values can carry a secret
    for (const [k, v] of Object.entries(raw as Obj)) walk(v, r[k], scope, [...path, k], out, depth + 1, via);
  }
}

/**
 * Walk the arguments as written (`raw`) and as rendered (`rendered`) side by side: register (mask)
 * the rendered value of every templated string that reads a secret, and return the templates that
 * read a declared secret.
 */
export function taintRendered(raw: unknown, rendered: unknown, scope: TaintScope): TaintedLeaf[] {
  const out: TaintedLeaf[] = [];
  if (scope.masker.size === 0 && scope.masker.provenance.empty && !namedAnywhere(raw)) return out;
  walk(raw, rendered, scope, [], out, 0);
  return out;
}

/** Whether some template under `raw` names a password- or token-like variable (cheap text test before the walk). */
function namedAnywhere(raw: unknown): boolean {
  return templatesUnder(raw).some((t) => /(pass(word|wd)|token|api[_-]?key|private[_-]?key)\b/i.test(t));
}

/** The declared secrets any template under `raw` (e.g. a `loop:`) reads; `own.value` set when one derives from kplay's own secret. */
export function declaredSourcesUnder(raw: unknown, scope: TaintScope, own: { value: boolean } = { value: false }): string[] {
  const out = new Set<string>();
  for (const t of typeof raw === 'string' && !Templar.isTemplated(raw) ? [`{{ ${raw} }}`] : templatesUnder(raw)) for (const s of declaredSources(t, scope, new Set(), 0, own)) out.add(s);
  return [...out];
}
