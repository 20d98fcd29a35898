/**
 * The lookups of the expression language (`lookup('name', terms…, key=value)`, `query()`):
 * ansible.builtin's (ansible-core 2.19 `plugins/lookup/`) and kubernetes.core's `k8s`, by short
 * name and fully qualified. Files are found as Ansible finds them: an absolute (or `~`) path as it
 * is, a relative one in the role's and playbook's directories (`ctx.searchPaths`); nothing reaches
 * the network.
 */
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { decryptFileData } from '../load/yaml.js';
import { JINJA_DELIMITERS, type Delimiters } from '../core/delimiters.js';
import type { Kwargs, LookupDef, PluginContext } from './plugins.js';
import { ExprError, Undef, isMap, truthy, typeName } from './values.js';
import { text } from './filters/def.js';
import { compile, search } from './filters/pyregex.js';
import { rstrip, lstrip, splitlines } from './filters/pytext.js';
import { convertBoolLoose, flat1 } from './lookup-args.js';
import { basedir, fileglob, findFile, firstFound } from './lookup-files.js';
import { password, sequence } from './lookup-generators.js';
import { iniLookup } from './lookup-ini.js';

/** A regular file (not a directory, not missing). */
const isFile = (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isFile() === true;

function runShell(cmd: string, ctx: PluginContext): { code: number; stdout: Buffer } {
  try {
    const stdout = execFileSync('/bin/sh', ['-c', cmd], {
      cwd: basedir(ctx),
      env: Object.fromEntries(Object.entries(ctx.env).filter((e): e is [string, string] => e[1] !== undefined)),
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
      timeout: 10 * 60_000,
    });
    return { code: 0, stdout };
  } catch (e) {
    const err = e as { status?: number | null; stdout?: Buffer };
    return { code: err.status ?? 1, stdout: err.stdout ?? Buffer.alloc(0) };
  }
}

function k8sLookup(kwargs: Kwargs, ctx: PluginContext): unknown[] {
  if (!ctx.k8s) {
    throw new ExprError(
      "the k8s lookup needs a cluster: this expression is evaluated where no cluster is connected",
      undefined,
      'use the lookup in a task that runs against a cluster (hosts with a kubeconfig/context), or read the object with kubernetes.core.k8s_info',
    );
  }
  if (kwargs.cluster_info !== undefined) throw new ExprError('the k8s lookup with cluster_info= is not supported by kplay');
  if (kwargs.src !== undefined) throw new ExprError('the k8s lookup with src= is not supported by kplay', undefined, 'give kind/api_version/resource_name/namespace, or resource_definition');
  let kind = kwargs.kind;
  let apiVersion = kwargs.api_version ?? 'v1';
  let name = kwargs.resource_name;
  let namespace = kwargs.namespace;
  const def = kwargs.resource_definition;
  if (isMap(def)) {
    kind = def.kind ?? kind;
    apiVersion = def.apiVersion ?? apiVersion;
    const meta = isMap(def.metadata) ? def.metadata : {};
    name = meta.name ?? name;
    namespace = meta.namespace ?? namespace;
  }
  if (!kind) {
    throw new ExprError("Error: no Kind specified. Use the 'kind' parameter, or provide an object YAML configuration using the 'resource_definition' parameter.");
  }
  const query: Record<string, unknown> = { apiVersion: text(apiVersion), kind: text(kind) };
  if (name !== undefined && name !== null) query.name = text(name);
  if (namespace !== undefined && namespace !== null) query.namespace = text(namespace);
  if (kwargs.label_selector !== undefined && kwargs.label_selector !== null) query.labelSelector = text(kwargs.label_selector);
  if (kwargs.field_selector !== undefined && kwargs.field_selector !== null) query.fieldSelector = text(kwargs.field_selector);
  const found = ctx.k8s.find(query);
  if (query.name !== undefined) return found.length > 0 ? [found[0]] : [];
  return found;
}

/** Evaluates a host pattern against the groups of the `groups` variable (set by the inventory layer). */
export type HostPatterns = (groups: Record<string, string[]>, pattern: string[]) => string[];

let hostPatterns: HostPatterns | undefined;

/** Give the `inventory_hostnames` lookup its host-pattern evaluator (the inventory layer's, registered as it loads). */
export function useHostPatterns(fn: HostPatterns): void {
  hostPatterns = fn;
}

/** The `groups` variable as ansible-core's inventory_hostnames lookup reads it: group → host names. */
function toGroups(v: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!isMap(v)) return out;
  for (const [g, hosts] of Object.entries(v)) out[g] = Array.isArray(hosts) ? hosts.map((h) => text(h)) : [];
  return out;
}

const CONFIG: Readonly<Record<string, unknown>> = {
  DEFAULT_BECOME_USER: 'root',
  DEFAULT_BECOME_METHOD: 'sudo',
  DEFAULT_REMOTE_USER: null,
  DEFAULT_TIMEOUT: 10,
  DEFAULT_FORKS: 5,
  DEFAULT_HASH_BEHAVIOUR: 'replace',
  DEFAULT_JINJA2_NATIVE: false,
  DEFAULT_KEEP_REMOTE_FILES: false,
  DEFAULT_PRIVATE_ROLE_VARS: false,
  DEFAULT_UNDEFINED_VAR_BEHAVIOR: true,
  ANSIBLE_FORCE_COLOR: false,
  HOST_KEY_CHECKING: true,
  RETRY_FILES_ENABLED: false,
  COLOR_CHANGED: 'yellow',
  COLOR_ERROR: 'red',
  COLOR_OK: 'green',
  COLOR_SKIP: 'cyan',
};

const BASE: Record<string, LookupDef> = {
  env: {
    fn: (terms, kwargs, ctx) => {
      return terms.map((t) => {
        const name = text(t).split(/\s+/).filter((x) => x !== '')[0] ?? '';
        const v = Object.prototype.hasOwnProperty.call(ctx.env, name) ? ctx.env[name] : undefined;
        if (v !== undefined) return v;
        // ansible-core 2.19 gives '' for an unset variable when no default= is given
        return Object.prototype.hasOwnProperty.call(kwargs, 'default') ? kwargs.default : '';
      });
    },
  },
  file: {
    fn: (terms, kwargs, ctx) => {
      return terms.map((t) => {
        const term = text(t);
        const tried: string[] = [];
        const found = findFile(ctx, 'files', term, tried);
        if (!found || !isFile(found)) throw new ExprError(`Unable to access the file '${term}'.`, undefined, `File not found: looked for ${tried.join(', ')}`);
        let content = readVaulted(found, ctx);
        if (truthy(kwargs.lstrip ?? false)) content = lstrip(content);
        if (truthy(kwargs.rstrip ?? true)) content = rstrip(content);
        return content;
      });
    },
  },
  unvault: {
    fn: (terms, _kwargs, ctx) => {
      return terms.map((t) => {
        const term = text(t);
        const found = findFile(ctx, 'files', term);
        if (!found) throw new ExprError(`Unable to find file matching "${term}" `);
        return readVaulted(found, ctx);
      });
    },
  },
  template: {
    fn: (terms, kwargs, ctx) => {
      const extra = kwargs.template_vars;
      if (extra !== undefined && extra !== null && !isMap(extra)) throw new ExprError(`template_vars must be a dict, got ${typeName(extra)}`);
      // the lookup's options for other delimiters (ansible-core's variable_/comment_start_string, …)
      const opt = (k: string, d: string): string => (typeof kwargs[k] === 'string' ? (kwargs[k] as string) : d);
      const delimiters: Delimiters = {
        ...JINJA_DELIMITERS,
        variableStart: opt('variable_start_string', JINJA_DELIMITERS.variableStart),
        variableEnd: opt('variable_end_string', JINJA_DELIMITERS.variableEnd),
        commentStart: opt('comment_start_string', JINJA_DELIMITERS.commentStart),
        commentEnd: opt('comment_end_string', JINJA_DELIMITERS.commentEnd),
      };
      return terms.map((t) => {
        const term = text(t);
        const found = findFile(ctx, 'templates', term);
        if (!found) throw new ExprError(`the template file ${term} could not be found for the lookup`);
        const vars: Record<string, unknown> = {
          template_host: '',
          template_path: term,
          template_fullpath: found,
          template_destpath: null,
          template_uid: '',
          template_run_date: new Date().toISOString(),
          ...(isMap(extra) ? extra : {}),
        };
        return ctx.render(readVaulted(found, ctx), vars, delimiters);
      });
    },
  },
  vars: {
    fn: (terms, kwargs, ctx) => {
      return terms.map((t) => {
        if (typeof t !== 'string') throw new ExprError(`Variable name must be 'str' not '${typeName(t)}'.`);
        const v = ctx.variable(t);
        if (!(v instanceof Undef)) return v;
        if (kwargs.default !== undefined && kwargs.default !== null) return kwargs.default;
        return new Undef(`No variable named '${t}' was found.`, t);
      });
    },
  },
  varnames: {
    fn: (terms, _kwargs, ctx) => {
      const names = ctx.variableNames();
      const out: string[] = [];
      for (const t of terms) {
        if (typeof t !== 'string') throw new ExprError(`Invalid setting identifier, "${text(t)}" is not a string, it is a ${typeName(t)}`);
        const rx = compile(t);
        for (const n of names) if (search(rx, n)) out.push(n);
      }
      return out;
    },
  },
  pipe: {
    fn: (terms, _kwargs, ctx) => {
      return terms.map((t) => {
        const cmd = text(t);
        const r = runShell(cmd, ctx);
        if (r.code !== 0) throw new ExprError(`lookup_plugin.pipe(${cmd}) returned ${r.code}`);
        return rstrip(r.stdout.toString('utf8'));
      });
    },
  },
  lines: {
    fn: (terms, _kwargs, ctx) => {
      return terms.flatMap((t) => {
        const cmd = text(t);
        const r = runShell(cmd, ctx);
        if (r.code !== 0) throw new ExprError(`lookup_plugin.lines(${cmd}) returned ${r.code}`);
        return splitlines(r.stdout.toString('utf8'));
      });
    },
  },
  password: { fn: (terms, kwargs, ctx) => terms.map((t) => password(text(t), kwargs, ctx)) },
  items: { fn: (terms) => flat1(terms) },
  list: { fn: (terms) => [...terms] },
  dict: {
    fn: (terms) =>
      terms.flatMap((t) => {
        if (!isMap(t)) throw new ExprError(`the 'dict' lookup plugin expects a dictionary, got '${text(t)}' of type <class '${typeName(t)}'>)`);
        return Object.entries(t).map(([key, value]) => ({ key, value }));
      }),
  },
  indexed_items: { fn: (terms) => flat1(terms).map((x, i) => [i, x]) },
  together: {
    fn: (terms) => {
      if (terms.length === 0) throw new ExprError('with_together requires at least one element in each list');
      const lists = terms.map((t) => (Array.isArray(t) ? t : [t]));
      const n = Math.max(...lists.map((l) => l.length));
      return Array.from({ length: n }, (_, i) => flat1(lists.map((l) => (i < l.length ? l[i] : null))));
    },
  },
  nested: {
    fn: (terms) => {
      if (terms.length === 0) throw new ExprError('with_nested requires at least one element in the nested list');
      const lists = terms.map((t) => (Array.isArray(t) ? t : [t]));
      let result: unknown[] = lists[0] ?? [];
      for (const next of lists.slice(1)) result = result.flatMap((x) => next.map((y) => flat1([x, y])));
      return result.map((x) => flat1([x]));
    },
  },
  subelements: {
    fn: (terms) => {
      const fail = (msg = ''): ExprError => new ExprError(`subelements lookup expects a list of two or three items, ${msg}`);
      if (terms.length < 2 || terms.length > 3) throw fail();
      const [list, key, flagsIn] = terms;
      if (!(Array.isArray(list) || isMap(list)) || typeof key !== 'string') throw fail('first a dict or a list, second a string pointing to the subkey');
      const path = key.split('.');
      let elements: unknown[];
      if (isMap(list)) {
        if (Object.prototype.hasOwnProperty.call(list, 'skipped') && list.skipped !== false) return [];
        elements = Object.values(list);
      } else elements = list;
      const flags = flagsIn === undefined ? {} : flagsIn;
      if (!isMap(flags)) throw fail("the optional third item must be a dict with flags ['skip_missing']");
      const skipMissing = convertBoolLoose(flags.skip_missing ?? false);
      const out: unknown[] = [];
      for (const item of elements) {
        if (!isMap(item)) throw new ExprError(`subelements lookup expects a dictionary, got '${text(item)}'`);
        if (Object.prototype.hasOwnProperty.call(item, 'skipped') && item.skipped !== false) continue;
        // Ansible pops the last subkey out of the item it returns: copy the path, then remove it
        const root: Record<string, unknown> = { ...item };
        let sub: Record<string, unknown> = root;
        let sublist: unknown[] = [];
        for (let i = 0; i < path.length; i++) {
          const k = path[i] ?? '';
          const last = i === path.length - 1;
          if (!Object.prototype.hasOwnProperty.call(sub, k)) {
            if (skipMissing) continue;
            throw new ExprError(`could not find '${k}' key in iterated item '${text(sub)}'`);
          }
          const v = sub[k];
          if (!last) {
            if (!isMap(v)) {
              if (skipMissing) continue;
              throw new ExprError(`the key ${k} should point to a dictionary, got '${text(v)}'`);
            }
            const copy = { ...v };
            sub[k] = copy;
            sub = copy;
          } else {
            if (!Array.isArray(v)) throw new ExprError(`the key ${k} should point to a list, got '${text(v)}'`);
            sublist = v;
            delete sub[k];
          }
        }
        for (const x of sublist) out.push([root, x]);
      }
      return out;
    },
  },
  sequence: { fn: (terms, kwargs) => sequence(terms, kwargs) },
  random_choice: { fn: (terms) => (terms.length === 0 ? [] : [terms[randomInt(terms.length)]]) },
  fileglob: { fn: (terms, _kwargs, ctx) => terms.flatMap((t) => fileglob(text(t), ctx)) },
  first_found: { fn: (terms, kwargs, ctx) => firstFound(terms, kwargs, ctx) },
  ini: { fn: (terms, kwargs, ctx) => iniLookup(terms, kwargs, ctx) },
  inventory_hostnames: {
    fn: (terms, _kwargs, ctx) => {
      const groups = toGroups(ctx.variable('groups'));
      if (!hostPatterns) throw new ExprError('the inventory_hostnames lookup is not available here: no inventory is loaded');
      return hostPatterns(groups, terms.map((t) => text(t)));
    },
  },
  config: {
    fn: (terms, kwargs) => {
      const onMissing = text(kwargs.on_missing ?? 'error');
      return terms.flatMap((t) => {
        const key = text(t);
        if (Object.prototype.hasOwnProperty.call(CONFIG, key)) return [CONFIG[key]];
        if (onMissing === 'skip') return [];
        if (onMissing === 'warn') return [];
        throw new ExprError(`Unable to find setting ${key}`, undefined, `kplay answers the config lookup for: ${Object.keys(CONFIG).join(', ')}`);
      });
    },
  },
  url: {
    fn: () => {
      throw new ExprError('the url lookup is not supported by kplay: expressions do not reach the network', undefined, 'fetch the data with a task (ansible.builtin.uri) and register it');
    },
  },
  dig: {
    fn: () => {
      throw new ExprError('the dig lookup is not supported by kplay: it needs DNS queries at templating time', undefined, 'resolve the name in a task (command: dig …) and register the result');
    },
  },
  k8s: { fn: (_terms, kwargs, ctx) => k8sLookup(kwargs, ctx) },
};


function build(): Map<string, LookupDef> {
  const m = new Map<string, LookupDef>();
  for (const [name, def] of Object.entries(BASE)) {
    if (name === 'k8s') {
      for (const n of ['k8s', 'kubernetes.core.k8s', 'community.kubernetes.k8s']) m.set(n, def);
    } else if (name === 'dig') {
      for (const n of ['dig', 'community.general.dig']) m.set(n, def);
    } else {
      m.set(name, def);
      m.set(`ansible.builtin.${name}`, def);
    }
  }
  return m;
}

/** Every lookup by name: short (`env`), `ansible.builtin.env`, `kubernetes.core.k8s`. */
/**
 * A file's text, decrypted when it is vault-encrypted as a whole (its plaintext is then a secret),
 * as ansible-core's loader reads files for the `file`, `unvault` and `template` lookups.
 */
function readVaulted(file: string, ctx: PluginContext): string {
  let r: { data: Buffer; vaulted: boolean };
  try {
    r = decryptFileData(readFileSync(file), file);
  } catch (e) {
    throw new ExprError(e instanceof Error ? e.message : String(e), undefined, 'give the vault password: --vault-password-file FILE, --vault-id LABEL@SOURCE or --ask-vault-pass');
  }
  const content = r.data.toString('utf8');
  if (r.vaulted) ctx.addSecret(content);
  return content;
}

export const LOOKUPS: ReadonlyMap<string, LookupDef> = build();
