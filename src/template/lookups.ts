/**
 * The lookups of the expression language (`lookup('name', terms…, key=value)`, `query()`):
 * ansible.builtin's (ansible-core 2.19 `plugins/lookup/`) and kubernetes.core's `k8s`, by short
 * name and fully qualified. Files are found as Ansible finds them: an absolute (or `~`) path as it
 * is, a relative one in the role's and playbook's directories (`ctx.searchPaths`); nothing reaches
 * the network.
 */
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fnmatchRegex } from '../core/fnmatch.js';
import type { Kwargs, LookupDef, PluginContext } from './plugins.js';
import { ExprError, Undef, isMap, num, truthy, typeName } from './values.js';
import { text } from './filters/def.js';
import { parseIntPy } from './filters/pynum.js';
import { percentFormat } from './filters/pyformat.js';
import { PyRandom } from './filters/pyrandom.js';
import { compile, search } from './filters/pyregex.js';
import { rstrip, lstrip, splitlines } from './filters/pytext.js';

/** ansible's `boolean(value, strict=False)`. */
function convertBoolLoose(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  const s = typeof v === 'string' ? v.toLowerCase().trim() : v;
  return s === 'y' || s === 'yes' || s === 'on' || s === '1' || s === 'true' || s === 't' || s === 1 || s === 1.0;
}

/** LookupBase._flatten: one level of lists. */
function flat1(terms: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const t of terms) {
    if (Array.isArray(t)) out.push(...t);
    else out.push(t);
  }
  return out;
}

function checkKwargs(name: string, kwargs: Kwargs, allowed: readonly string[]): void {
  for (const k of Object.keys(kwargs)) {
    if (!allowed.includes(k)) throw new ExprError(`Invalid option(s) for the ${name} lookup: ${k}`, undefined, allowed.length ? `${name} accepts: ${allowed.join(', ')}` : `${name} takes no options`);
  }
}

/** `~` and `~/x` as Ansible's `unfrackpath` expands them (the controller user's home directory). */
export function expandUser(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(homedir(), p.slice(1)) : p;
}

/** Ansible's `find_file_in_search_path`: `<path>/<subdir>/<name>`, then `<path>/<name>`, for each search path. */
function findFile(ctx: PluginContext, subdir: string, name: string): string | undefined {
  const given = expandUser(name);
  const candidates = path.isAbsolute(given) ? [given] : ctx.searchPaths.flatMap((base) => [path.join(base, subdir, given), path.join(base, given)]);
  for (const c of candidates) {
    try {
      if (statSync(c).isFile()) return c;
    } catch {
      // not there: next candidate
    }
  }
  return undefined;
}

/** The directory relative commands run in and relative paths resolve against (the playbook's). */
function basedir(ctx: PluginContext): string {
  return ctx.searchPaths[ctx.searchPaths.length - 1] ?? ctx.fileRoots[0] ?? process.cwd();
}

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

/** Python's `string` module constants the password lookup's `chars` may name. */
const CHAR_SETS: Readonly<Record<string, string>> = {
  ascii_letters: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
  ascii_lowercase: 'abcdefghijklmnopqrstuvwxyz',
  ascii_uppercase: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digits: '0123456789',
  hexdigits: '0123456789abcdefABCDEF',
  octdigits: '01234567',
  punctuation: '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  whitespace: ' \t\n\r\x0b\x0c',
  printable: '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c',
};

/** Ansible's `parse_kv` for the simple `key=value key2="v 2"` forms the password and sequence lookups take. */
function parseKv(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  const raw: string[] = [];
  for (const m of s.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\S*)|(\S+)/g)) {
    if (m[1] !== undefined) {
      let v = m[2] ?? '';
      if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
      Object.defineProperty(out, m[1], { value: v, enumerable: true, writable: true, configurable: true });
    } else if (m[3] !== undefined) raw.push(m[3]);
  }
  if (raw.length > 0) Object.defineProperty(out, '_raw_params', { value: raw.join(' '), enumerable: true, writable: true, configurable: true });
  return out;
}

function passwordChars(spec: unknown): string {
  let specs: string[];
  if (typeof spec === 'string') {
    specs = [];
    if (spec.includes(',,')) specs.push(',');
    specs.push(...spec.replace(/,,/g, ',').split(',').filter((c) => c !== ''));
  } else if (Array.isArray(spec)) specs = spec.map((x) => text(x));
  else specs = ['ascii_letters', 'digits', '.,:-_'];
  return specs
    .map((s) => CHAR_SETS[s] ?? s)
    .join('')
    .replace(/["']/g, '');
}

function password(term: string, kwargs: Kwargs, ctx: PluginContext): string {
  const [first = '', rest] = [term.split(' ', 1)[0], term.includes(' ') ? term.slice(term.indexOf(' ') + 1) : undefined];
  let relpath = first;
  const params: Record<string, unknown> = { ...kwargs };
  if (rest !== undefined) {
    const kv = parseKv(rest);
    if (kv._raw_params !== undefined) {
      relpath = `${relpath} ${kv._raw_params}`;
      delete kv._raw_params;
      if (!term.startsWith(relpath)) throw new ExprError('Unrecognized value after key=value parameters given to password lookup');
    }
    Object.assign(params, kv);
  }
  const invalid = Object.keys(params).filter((k) => !['length', 'encrypt', 'chars', 'ident', 'seed'].includes(k));
  if (invalid.length > 0) throw new ExprError(`Unrecognized parameter(s) given to password lookup: ${invalid.join(', ')}`);
  if (params.encrypt !== undefined && params.encrypt !== null && params.encrypt !== '') {
    throw new ExprError('the password lookup with encrypt= is not supported by kplay', undefined, 'use the plaintext password, or hash it with a module on the target');
  }
  const length = params.length === undefined ? 20 : Number(typeof params.length === 'string' ? params.length : num(params.length));
  if (!Number.isInteger(length) || length < 0) throw new ExprError(`the password lookup's length must be an integer, got ${text(params.length)}`);
  const chars = passwordChars(params.chars);
  if (chars.length === 0) throw new ExprError('Cannot choose from an empty sequence');
  const devNull = relpath === '/dev/null';
  const file = path.resolve(basedir(ctx), expandUser(relpath));
  let plain: string | undefined;
  if (!devNull && existsSync(file)) {
    const content = rstrip(readFileSync(file, 'utf8'));
    const salt = content.lastIndexOf(' salt=');
    plain = salt >= 0 ? content.slice(0, salt) : content;
  }
  if (plain === undefined) {
    const seed = params.seed;
    // the seed option is a string in ansible-core (seed=42 seeds with '42')
    const gen = seed === undefined || seed === null ? null : new PyRandom(text(seed));
    plain = Array.from({ length }, () => (gen ? gen.choice([...chars]) : chars[randomInt(chars.length)])).join('');
    if (!devNull) {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const fd = openSync(file, 'w', 0o600);
      try {
        chmodSync(file, 0o600);
        writeSync(fd, `${plain}\n`);
      } finally {
        closeSync(fd);
      }
    }
  }
  ctx.addSecret(plain);
  return plain;
}

const SEQ_SHORTCUT = /^((0?x?[0-9a-f]+)-)?(0?x?[0-9a-f]+)(\/(0?x?[0-9a-f]+))?(:(.+))?$/i;

function seqInt(v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const s = text(v);
  // ansible-core 2.19 types the options as integers: decimal only (hex/octal forms are refused)
  const n = parseIntPy(s, 10);
  if (n === null) throw new ExprError(`Config '${field}' for 'sequence' lookup plugin from 'Direct' has an invalid value: Invalid value provided for 'integer': '${s}'`);
  if (typeof n === 'bigint') throw new ExprError(`the sequence lookup's '${field}' is too large: ${s}`, undefined, 'kplay bounds template memory');
  return n;
}

function sequence(terms: readonly unknown[], kwargs: Kwargs): string[] {
  const list = terms.length === 0 && Object.keys(kwargs).length > 0 ? [''] : terms;
  const out: string[] = [];
  for (const termIn of list) {
    const term = text(termIn);
    const opts: Record<string, unknown> = { start: 1, stride: 1, format: '%d', count: null, end: null, ...kwargs };
    const m = SEQ_SHORTCUT.exec(term);
    if (m) {
      if (m[2] !== undefined) opts.start = m[2];
      opts.end = m[3];
      if (m[5] !== undefined) opts.stride = m[5];
      if (m[7] !== undefined) opts.format = m[7];
    } else {
      const kv = parseKv(term);
      const unknown = Object.keys(kv).filter((k) => !['start', 'end', 'stride', 'count', 'format'].includes(k));
      if (unknown.length > 0) throw new ExprError(`unrecognized arguments to with_sequence: [${unknown.map((k) => `'${k}'`).join(', ')}]`);
      Object.assign(opts, kv);
    }
    const start = seqInt(opts.start, 'start');
    const stride = seqInt(opts.stride, 'stride');
    const format = text(opts.format);
    let end: number;
    if (opts.count === null && opts.end === null) throw new ExprError('must specify count or end in with_sequence');
    if (opts.count !== null && opts.end !== null) throw new ExprError("can't specify both count and end in with_sequence");
    if (opts.count !== null) {
      const count = seqInt(opts.count, 'count');
      if (count === 0) continue;
      end = start + count * stride - 1;
    } else end = seqInt(opts.end, 'end');
    if (stride > 0 && end < start) throw new ExprError('to count backwards make stride negative');
    if (stride < 0 && end > start) throw new ExprError("to count forward don't make stride negative");
    if (stride === 0) continue;
    if ((format.match(/%/g) ?? []).length !== 1) throw new ExprError(`bad formatting string: ${format}`);
    const adjust = stride >= 0 ? 1 : -1;
    for (let i = start; stride > 0 ? i < end + adjust : i > end + adjust; i += stride) {
      try {
        out.push(percentFormat(format, [i]));
      } catch {
        throw new ExprError(`problem formatting ${i} with '${format}'`);
      }
      if (out.length > 1_000_000) throw new ExprError('with_sequence: more than 1,000,000 items');
    }
  }
  return out;
}

/** Python's `glob.glob(pattern)` (no hidden files for wildcards). */
function glob(pattern: string): string[] {
  const parts = pattern.split('/');
  let paths = [pattern.startsWith('/') ? '/' : '.'];
  for (const part of parts) {
    if (part === '') continue;
    if (!/[*?[]/.test(part)) {
      paths = paths.map((p) => path.join(p, part)).filter((p) => existsSync(p));
      continue;
    }
    const re = fnmatchRegex(part);
    const next: string[] = [];
    for (const p of paths) {
      let names: string[] = [];
      try {
        names = readdirSync(p).sort();
      } catch {
        continue;
      }
      for (const n of names) if (re.test(n) && (!n.startsWith('.') || part.startsWith('.'))) next.push(path.join(p, n));
    }
    paths = next;
  }
  return paths;
}

function fileglob(term: string, ctx: PluginContext): string[] {
  const name = path.basename(term);
  const dirs: string[] = [];
  if (name !== term) {
    const dir = expandUser(path.dirname(term));
    const found = path.isAbsolute(dir) ? dir : ctx.searchPaths.flatMap((b) => [path.join(b, 'files', dir), path.join(b, dir)]).find((d) => existsSync(d));
    if (found) dirs.push(found);
  } else dirs.push(...ctx.searchPaths.flatMap((b) => [path.join(b, 'files'), b]));
  for (const d of dirs) {
    const hits = glob(path.join(d, name)).filter((g) => {
      try {
        return statSync(g).isFile();
      } catch {
        return false;
      }
    });
    if (hits.length > 0) return hits;
  }
  return [];
}

function firstFound(terms: readonly unknown[], kwargs: Kwargs, ctx: PluginContext): unknown[] {
  checkKwargs('first_found', kwargs, ['files', 'paths', 'skip']);
  const skip = truthy(kwargs.skip ?? false);
  const split = (v: unknown): string[] =>
    (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).flatMap((x) => text(x).split(/[,;:]/)).map((x) => x.trim()).filter((x) => x !== '');
  let files: string[] = split(kwargs.files);
  let paths: string[] = split(kwargs.paths);
  for (const t of flat1(terms)) {
    if (isMap(t)) {
      files.push(...split(t.files));
      paths.push(...split(t.paths));
      if (t.skip !== undefined && truthy(t.skip)) return firstFoundIn(files, paths, ctx, true);
    } else if (typeof t === 'string') files.push(t);
  }
  files = files.length ? files : [];
  paths = paths.length ? paths : [];
  return firstFoundIn(files, paths, ctx, skip);
}

function firstFoundIn(files: readonly string[], paths: readonly string[], ctx: PluginContext, skip: boolean): unknown[] {
  const candidates = paths.length > 0 ? paths.flatMap((p) => files.map((f) => path.join(p, f))) : [...files];
  for (const c of candidates) {
    const found = findFile(ctx, 'files', c);
    if (found) return [found];
  }
  if (skip) return [];
  throw new ExprError('No file was found when using first_found.', undefined, `looked for ${candidates.map((c) => JSON.stringify(c)).join(', ')} in ${ctx.searchPaths.join(', ')}`);
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
      checkKwargs('env', kwargs, ['default']);
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
      checkKwargs('file', kwargs, ['lstrip', 'rstrip']);
      return terms.map((t) => {
        const term = text(t);
        const found = findFile(ctx, 'files', term);
        if (!found) throw new ExprError(`Unable to access the file '${term}'.`, undefined, `File not found: looked in ${ctx.searchPaths.map((p) => `${p}/files, ${p}`).join('; ')}`);
        let content = readFileSync(found, 'utf8');
        if (truthy(kwargs.lstrip ?? false)) content = lstrip(content);
        if (truthy(kwargs.rstrip ?? true)) content = rstrip(content);
        return content;
      });
    },
  },
  unvault: {
    fn: (terms, kwargs, ctx) => {
      checkKwargs('unvault', kwargs, []);
      return terms.map((t) => {
        const term = text(t);
        const found = findFile(ctx, 'files', term);
        if (!found) throw new ExprError(`Unable to find file matching "${term}" `);
        const content = readFileSync(found, 'utf8');
        if (content.startsWith('$ANSIBLE_VAULT;')) throw new ExprError(`${term} is vault-encrypted: kplay does not decrypt Ansible Vault files`, undefined, 'keep the secret in a kplay secret source instead');
        return content;
      });
    },
  },
  template: {
    fn: (terms, kwargs, ctx) => {
      checkKwargs('template', kwargs, ['template_vars', 'convert_data', 'jinja2_native']);
      const extra = kwargs.template_vars;
      if (extra !== undefined && extra !== null && !isMap(extra)) throw new ExprError(`template_vars must be a dict, got ${typeName(extra)}`);
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
        return ctx.render(readFileSync(found, 'utf8'), vars);
      });
    },
  },
  vars: {
    fn: (terms, kwargs, ctx) => {
      checkKwargs('vars', kwargs, ['default']);
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
    fn: (terms, kwargs, ctx) => {
      checkKwargs('varnames', kwargs, []);
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
    fn: (terms, kwargs, ctx) => {
      checkKwargs('pipe', kwargs, []);
      return terms.map((t) => {
        const cmd = text(t);
        const r = runShell(cmd, ctx);
        if (r.code !== 0) throw new ExprError(`lookup_plugin.pipe(${cmd}) returned ${r.code}`);
        return rstrip(r.stdout.toString('utf8'));
      });
    },
  },
  lines: {
    fn: (terms, kwargs, ctx) => {
      checkKwargs('lines', kwargs, []);
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
  config: {
    fn: (terms, kwargs) => {
      checkKwargs('config', kwargs, ['on_missing', 'plugin_type', 'plugin_name', 'show_origin']);
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
export const LOOKUPS: ReadonlyMap<string, LookupDef> = build();
