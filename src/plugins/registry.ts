/**
 * The module registry. Load order (a duplicate name is an error, never a silent override):
 *  1. built-ins from `modules/` (compiled to `dist/modules/`),
 *  2. `--module-path` directories, then `modules:` paths in `kplay.config.json` (cwd or playbook dir),
 *  3. installed npm packages named `kplay-module-*` (in `node_modules` of the playbook dir and cwd).
 * A module file (`.js`, `.mjs`, or TypeScript `.ts`/`.mts`, compiled on load) default-exports
 * `defineModule({...})` (or exports `module`).
 */
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InputError } from '../load/errors.js';
import { compileSchema } from '../load/schema.js';
import { closest } from '../load/suggest.js';
import type { AnyModule } from '../core/module.js';
import { usePrecompiledModule } from './precompiled.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Directory of the compiled built-in modules. */
export const BUILTIN_DIR = path.resolve(here, '../../modules');

/** Where a module came from (shown by `kplay modules`). */
export interface RegisteredModule {
  module: AnyModule;
  source: string;
}

/** A registered module: loaded, or a built-in known by name from the build's index (see {@link BUILTIN_INDEX}), imported on first use. */
interface Entry {
  source: string;
  module?: AnyModule;
  loading?: Promise<AnyModule>;
}

export class ModuleRegistry {
  private readonly byName = new Map<string, Entry>();
  private readonly prepared = new Map<string, Promise<void>>();

  /** Register a module object; throws a clear error when malformed or duplicated. */
  add(candidate: unknown, source: string): void {
    const mod = checkModule(candidate, source);
    this.claim(mod.name, source);
    this.byName.set(mod.name, { module: mod, source });
  }

  /** Register built-in module `name` of file `source`, imported by {@link load} when a playbook uses it. */
  addLazy(name: string, source: string): void {
    this.claim(name, source);
    this.byName.set(name, { source });
  }

  private claim(name: string, source: string): void {
    const prev = this.byName.get(name);
    if (prev) {
      throw new InputError(`module '${name}' is defined twice: in ${prev.source} and in ${source}`, undefined, 'rename one of them; kplay never lets one module silently replace another');
    }
  }

  /**
   * The module `name`, imported first if it was registered by name only; `undefined` when no
   * module has that name. Its file must define the module the index named.
   */
  async load(name: string): Promise<AnyModule | undefined> {
    const e = this.byName.get(name);
    if (!e) return undefined;
    if (e.module) return e.module;
    e.loading ??= importModuleFile(e.source).then((candidate) => {
      // a file that fails to import or define its module is reported as an eager load reports it
      const mod = checkModule(candidate, e.source);
      if (mod.name !== name) throw new InputError(`${e.source} defines module '${mod.name}', but the build's module index names it '${name}'`, undefined, 'rebuild kplay (npm run build)');
      e.module = mod;
      return mod;
    }, (err: unknown) => {
      throw new InputError(`cannot load module ${e.source}: ${err instanceof Error ? err.message : String(err)}`);
    });
    return e.loading;
  }

  /** Import every module registered by name only (commands that show or check them all). */
  async loadAll(): Promise<void> {
    await Promise.all([...this.byName.keys()].map((n) => this.load(n)));
  }

  /**
   * Make a module ready to validate its arguments without compiling: a built-in module's schemas
   * were compiled at build time (see `precompiled.ts`). Once per module; other modules compile
   * on first use.
   */
  prepare(name: string): Promise<void> {
    let p = this.prepared.get(name);
    if (!p) {
      const r = this.byName.get(name);
      p = r && r.source.startsWith(BUILTIN_DIR + path.sep) ? this.load(name).then((m) => (m ? usePrecompiledModule(m, BUILTIN_DIR) : false)).then(() => undefined) : Promise.resolve();
      this.prepared.set(name, p);
    }
    return p;
  }

  /**
   * The loaded module `name` (every module a parsed playbook uses is: the parser {@link load}s
   * them). A module known by name only is a programming error here, reported as one.
   */
  get(name: string): AnyModule | undefined {
    const e = this.byName.get(name);
    if (e && !e.module) throw new Error(`internal error: module '${name}' was used before it was loaded (ModuleRegistry.load)`);
    return e?.module;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** All modules, sorted by name ({@link loadAll} first when some are known by name only). */
  list(): RegisteredModule[] {
    return [...this.byName.keys()].sort((a, b) => a.localeCompare(b)).map((n) => ({ module: this.get(n) as AnyModule, source: this.byName.get(n)?.source ?? '' }));
  }

  /** Every module's name and file, loaded or not, sorted by name. */
  sources(): { name: string; source: string }[] {
    return [...this.byName.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, e]) => ({ name, source: e.source }));
  }

  /**
   * Compile every module's argument and result schemas; a broken one is a clear error naming the
   * module. `builtins: false` (kplay validate) leaves out the built-in modules: their schemas are
   * compiled by the test suite, and compiling them costs a third of a validate.
   */
  compileAll(opts: { builtins?: boolean } = {}): void {
    for (const [name, { source }] of this.byName.entries()) {
      if (opts.builtins === false && source.startsWith(BUILTIN_DIR + path.sep)) continue;
      const module = this.get(name) as AnyModule;
      try {
        compileSchema(module.schema);
        compileSchema(module.result);
      } catch (e) {
        throw new InputError(`malformed module in ${source}: invalid schema: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  /** The closest module names to a misspelt one (prefix matches count too: `k8s` → `k8s_apply`). */
  suggest(name: string): string[] {
    const near = closest(name, this.names());
    const prefixed = this.names().filter((n) => name.length >= 3 && (n.startsWith(name) || name.startsWith(n)));
    return [...new Set([...near, ...prefixed])].slice(0, 3);
  }
}

function checkModule(candidate: unknown, source: string): AnyModule {
  const bad = (why: string): never => {
    throw new InputError(`malformed module in ${source}: ${why}`, undefined, 'a module file must `export default defineModule({ name, summary, schema, result, checkMode, diffMode, examples, run })` (see `kplay/sdk`)');
  };
  if (candidate === null || typeof candidate !== 'object') return bad('the default export is not an object');
  const m = candidate as Record<string, unknown>;
  if (typeof m.name !== 'string' || !/^[a-z][a-z0-9_]*$/.test(m.name)) return bad('`name` must be lowercase letters, digits and _');
  if (typeof m.summary !== 'string' || !m.summary) return bad('`summary` is required');
  if (typeof m.run !== 'function') return bad('`run(args, ctx)` must be a function');
  if (m.checkMode !== 'supported' && m.checkMode !== 'unsupported') return bad("`checkMode` must be 'supported' or 'unsupported'");
  if (m.diffMode !== undefined && m.diffMode !== 'supported' && m.diffMode !== 'unsupported') return bad("`diffMode` must be 'supported' or 'unsupported'");
  if (!Array.isArray(m.examples)) return bad('`examples` must be a list');
  const schema = m.schema;
  if (schema === null || typeof schema !== 'object') return bad('`schema` must be a JSON Schema object');
  const s = schema as Record<string, unknown>;
  if (s.type !== 'object' || s.additionalProperties !== false) return bad('`schema` must be `type: object` with `additionalProperties: false`');
  const r = m.result;
  if (r !== undefined && (r === null || typeof r !== 'object' || (r as Record<string, unknown>).type !== 'object')) return bad('`result` must be an object schema (`Type.Object({...})`) describing the data `run` returns');
  // The schema is compiled on first use (compiling every module's schema at start-up cost ~0.3 s
  // per run); `kplay validate` and `kplay modules` compile them all (`compileAll`).
  // Modules written before results and diff mode were declared still load: their result is
  // undeclared (any object) and they show no diffs.
  if (r !== undefined && m.diffMode !== undefined) return candidate as AnyModule;
  return { ...(candidate as AnyModule), result: r === undefined ? UNDECLARED_RESULT : (r as AnyModule['result']), diffMode: m.diffMode === undefined ? 'unsupported' : (m.diffMode as AnyModule['diffMode']) };
}

/** The result schema of a module that declares none: an object, keys not described. */
const UNDECLARED_RESULT = { type: 'object', description: 'not declared by the module' };

let sdkHooked = false;

/**
 * Let modules outside kplay's package (`--module-path`, `kplay.config.json`, `kplay-module-*`
 * packages) import `kplay/sdk` without installing kplay next to them: a resolve hook maps that
 * specifier to this kplay's SDK, so a module always talks to the kplay that loads it.
 */
function hookSdk(): void {
  if (sdkHooked) return;
  sdkHooked = true;
  const sdkFile = path.resolve(here, '../sdk/index.js');
  if (!existsSync(sdkFile) || typeof register !== 'function') return; // running from sources (tests), or Node < 20.6
  const sdkUrl = pathToFileURL(sdkFile).href;
  const hook = `export async function resolve(specifier, context, next) { return specifier === 'kplay/sdk' ? { url: ${JSON.stringify(sdkUrl)}, shortCircuit: true } : next(specifier, context); }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
}

/** Module files kplay loads: JavaScript, and TypeScript (compiled on load). */
const MODULE_FILE = /\.(m?js|m?ts)$/;
const TS_FILE = /\.m?ts$/;

let tsRegistered: Promise<void> | undefined;

/**
 * Load TypeScript community modules without a build step: tsx's loader (esbuild) is registered
 * the first time a `.ts` module is imported, so runs without TypeScript modules never pay for it.
 */
function registerTypeScript(): Promise<void> {
  tsRegistered ??= import('tsx/esm/api').then(({ register: registerTsx }) => {
    registerTsx();
  });
  return tsRegistered;
}

async function importModuleFile(file: string): Promise<unknown> {
  if (!path.resolve(file).startsWith(BUILTIN_DIR + path.sep)) hookSdk();
  if (TS_FILE.test(file)) await registerTypeScript();
  const ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  return ns.default ?? ns.module;
}

/**
 * The built, bundled modules' index (`dist/modules/_index.json`, written by
 * `src/build/module-validators.ts`): each module file's name → the module it defines. With it, a
 * run imports only the built-in modules its playbook uses (importing all 44 cost ~40 ms of every
 * start-up); without it (running from sources), or when it does not list exactly the files
 * present, every file is imported.
 */
export const BUILTIN_INDEX = '_index.json';

/** The index of `dir` when it lists exactly `files` (module files' base names), else `undefined`. */
export async function builtinIndex(dir: string, files: string[]): Promise<Record<string, string> | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path.join(dir, BUILTIN_INDEX), 'utf8'));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const index = parsed as Record<string, unknown>;
  const listed = Object.keys(index).sort();
  const same = listed.length === files.length && listed.every((f, i) => f === files[i] && typeof index[f] === 'string');
  return same ? (index as Record<string, string>) : undefined;
}

async function loadDir(reg: ModuleRegistry, dir: string, required: boolean, lazy = false): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    if (required) throw new InputError(`module path ${dir} does not exist or is not a directory`);
    return;
  }
  const files = entries
    .sort()
    .filter((f) => MODULE_FILE.test(f) && !/\.d\.m?ts$/.test(f) && !f.startsWith('_'))
    // a TypeScript module compiled next to itself is loaded once, as the compiled file
    .filter((f) => !(TS_FILE.test(f) && entries.includes(f.replace(/ts$/, 'js'))))
    .map((f) => path.join(dir, f));
  const index = lazy ? await builtinIndex(dir, files.map((f) => path.basename(f))) : undefined;
  if (index) {
    for (const file of files) reg.addLazy(index[path.basename(file)] ?? '', file);
    return;
  }
  // imported together (one after another cost ~2 ms per built-in module at every start-up),
  // registered in name order, so a duplicate or a broken file is reported as before
  const loaded = await Promise.allSettled(files.map((file) => importModuleFile(file)));
  files.forEach((file, i) => {
    const r = loaded[i];
    if (r?.status === 'rejected') throw new InputError(`cannot load module ${file}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`);
    reg.add(r?.value, file);
  });
}

async function configModulePaths(dir: string): Promise<string[]> {
  const file = path.join(dir, 'kplay.config.json');
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new InputError(`${file}: invalid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const mods = (parsed as { modules?: unknown }).modules;
  if (mods === undefined) return [];
  if (!Array.isArray(mods) || !mods.every((m) => typeof m === 'string')) {
    throw new InputError(`${file}: \`modules\` must be a list of directory paths`);
  }
  return mods.map((m) => path.resolve(dir, m));
}

async function npmModulePackages(dir: string): Promise<string[]> {
  const nm = path.join(dir, 'node_modules');
  let names: string[];
  try {
    names = await readdir(nm);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names.sort()) {
    if (!n.startsWith('kplay-module-')) continue;
    const pkgDir = path.join(nm, n);
    if ((await stat(pkgDir)).isDirectory()) out.push(pkgDir);
  }
  return out;
}

/** Options for {@link loadRegistry}. */
export interface RegistryOptions {
  /** Extra directories (`--module-path`). */
  modulePaths?: string[];
  /** Ansible's module directories (`ANSIBLE_LIBRARY`, `library` in ansible.cfg): loaded after `modulePaths`; a missing one is skipped, as ansible-core does. */
  libraryPaths?: string[];
  /** Directories to look for `kplay.config.json` and `node_modules/kplay-module-*` (playbook dir, cwd). */
  searchDirs?: string[];
  /**
   * Register the built-in modules by name from the build's index and import each on first use
   * ({@link ModuleRegistry.load}; a run imports only those its playbook uses). `list()` then
   * needs `loadAll()` first.
   * @default false
   */
  lazy?: boolean;
}

/** Build the registry (see the load order at the top of this file). */
export async function loadRegistry(opts: RegistryOptions = {}): Promise<ModuleRegistry> {
  const reg = new ModuleRegistry();
  await loadDir(reg, BUILTIN_DIR, true, opts.lazy === true);
  const dirs = [...new Set((opts.searchDirs ?? []).map((d) => path.resolve(d)))];
  const paths = [...(opts.modulePaths ?? []).map((p) => path.resolve(p))];
  for (const d of dirs) paths.push(...(await configModulePaths(d)));
  for (const p of [...new Set(paths)]) await loadDir(reg, p, true);
  for (const p of opts.libraryPaths ?? []) if (!paths.includes(path.resolve(p))) await loadDir(reg, path.resolve(p), false);
  const seenPkgs = new Set<string>();
  for (const d of dirs) {
    for (const pkgDir of await npmModulePackages(d)) {
      if (seenPkgs.has(path.basename(pkgDir))) continue;
      seenPkgs.add(path.basename(pkgDir));
      let mod: unknown;
      try {
        const ns = (await import(pathToFileURL(path.join(pkgDir, 'package.json')).href, { with: { type: 'json' } })) as { default: { main?: string; exports?: unknown } };
        const main = typeof ns.default.main === 'string' ? ns.default.main : 'index.js';
        mod = await importModuleFile(path.join(pkgDir, main));
      } catch (e) {
        throw new InputError(`cannot load npm module package ${pkgDir}: ${e instanceof Error ? e.message : String(e)}`);
      }
      reg.add(mod, pkgDir);
    }
  }
  return reg;
}
