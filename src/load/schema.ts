/**
 * JSON Schema validation (ajv, strict) that reports errors at the `file:line:col` of the
 * offending YAML node, with the friendliest message ajv's errors allow.
 */
import { setting } from '../core/settings.js';
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type * as AjvModule from 'ajv';
import { InputError, type SourcePos } from './errors.js';
import { posOfPath } from './yaml.js';
import type { JsonSchema } from '../core/module.js';

/** Options of every ajv instance (plus coercion and defaults where named). */
export const AJV_OPTIONS = { strict: true, allErrors: true, allowUnionTypes: true, verbose: false } as const;
/** Documentation-only keywords used in schemas. */
export const DOC_KEYWORDS = ['x-kplay-example', 'markdownDescription'] as const;

/** Options of {@link compileSchema}. */
export interface CompileOptions {
  /**
   * Coerce scalar types ("3" → 3, "true" → true), because templates and `-e k=v` produce
   * strings — the same leniency Ansible has for module arguments. Use it through
   * {@link validateArgs}: ajv coerces in place even inside `anyOf` branches that then fail, so
   * coercion is only tried, on a copy, when the arguments are invalid as they are.
   * @default false
   */
  coerce?: boolean;
  /** Fill in `default`s of absent properties (mutates the validated value). @default false */
  defaults?: boolean;
}

/** A compile variant: `c` coerces, `d` fills in defaults. */
export type Variant = '' | 'c' | 'd' | 'cd';

/** The variant of compile options. */
export const variantOf = (opts: CompileOptions): Variant => `${opts.coerce ? 'c' : ''}${opts.defaults ? 'd' : ''}` as Variant;

/** The ajv options of a variant (the build compiles built-in schemas with the same). */
export function ajvOptions(v: Variant): typeof AJV_OPTIONS & { coerceTypes?: boolean; useDefaults?: boolean } {
  return { ...AJV_OPTIONS, ...(v.includes('c') ? { coerceTypes: true } : {}), ...(v.includes('d') ? { useDefaults: true } : {}) };
}

/**
 * One ajv instance per variant, made on first use: each costs a meta-schema compilation, and
 * built-in schemas are compiled at build time, so most runs make none.
 */
const instances = new Map<Variant, Ajv>();
/**
 * ajv's compiler, required on first use rather than bundled: a run compiles no schema (the
 * build did), and its ~250 KB of code cost every start-up a compilation otherwise.
 */
let ajvModule: typeof AjvModule | undefined;
const requireLazy = createRequire(import.meta.url);
/** The shared ajv instance of a variant (strict mode, all errors; `''`: no coercion, no defaults). */
export function ajvInstance(v: Variant = ''): Ajv {
  let a = instances.get(v);
  if (!a) {
    ajvModule ??= requireLazy('ajv') as typeof AjvModule;
    a = new ajvModule.Ajv(ajvOptions(v));
    for (const keyword of DOC_KEYWORDS) a.addKeyword({ keyword });
    instances.set(v, a);
  }
  return a;
}

const caches = new Map<Variant, WeakMap<JsonSchema, ValidateFunction>>();

/** Use `fn` (compiled at build time with {@link ajvOptions} of the variant) for `schema`. */
export function registerCompiled(schema: JsonSchema, fn: ValidateFunction, opts: CompileOptions = {}): void {
  const v = variantOf(opts);
  let c = caches.get(v);
  if (!c) caches.set(v, (c = new WeakMap()));
  c.set(schema, fn);
}

/**
 * The start of a file of ajv standalone code loaded as an ES module: ajv's output require()s its
 * run-time helpers (`ucs2length` for `minLength`, `equal`, …) even with `code.esm`.
 */
export const STANDALONE_PRELUDE = "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n";

/** FNV-1a of the JSON of `value`: tells whether code generated at build time was made from it. */
export function fingerprint(value: unknown): string {
  const text = JSON.stringify(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

/** Compile (and cache) a schema. Throws if the schema itself is invalid (a bug in a module). */
export function compileSchema(schema: JsonSchema, opts: CompileOptions = {}): ValidateFunction {
  const v = variantOf(opts);
  let c = caches.get(v);
  if (!c) caches.set(v, (c = new WeakMap()));
  let fn = c.get(schema);
  if (!fn) {
    fn = ajvInstance(v).compile(schema);
    c.set(schema, fn);
    countCompilation(schema);
  }
  return fn;
}

/** Schemas compiled at run time, by title (or `$id`, or `untitled`). */
const compiledAtRunTime: string[] = [];

/**
 * With `KPLAY_STATS_FILE` set, the schemas this process compiled are appended to that file as one
 * JSON line (`{"schemaCompilations": n, "schemas": [...]}`) at exit: built-in and static schemas
 * are compiled at build time, so a run compiling one of them is a regression the tests catch.
 */
function countCompilation(schema: JsonSchema): void {
  const file = setting('statsFile');
  if (!file) return;
  if (!compiledAtRunTime.length) {
    process.on('exit', () => {
      try {
        appendFileSync(file, `${JSON.stringify({ schemaCompilations: compiledAtRunTime.length, schemas: compiledAtRunTime })}\n`);
      } catch {
        // statistics are best effort
      }
    });
  }
  const s = schema as { title?: unknown; $id?: unknown; description?: unknown };
  compiledAtRunTime.push(String(s.title ?? s.$id ?? s.description ?? 'untitled').slice(0, 80));
}

function splitPointer(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Turn one ajv error into words an ops engineer understands. */
export function describeAjvError(e: ErrorObject, what: string): string {
  const path = splitPointer(e.instancePath);
  const at = path.length ? `${what}.${path.join('.')}` : what;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${at}: unknown key '${String(p.additionalProperty)}'`;
    case 'required':
      return `${at}: missing required key '${String(p.missingProperty)}'`;
    case 'type':
      return `${at}: must be ${String(p.type)}`;
    case 'enum':
      return `${at}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${at}: must be ${JSON.stringify(p.allowedValue)}`;
    default:
      return `${at}: ${e.message ?? e.keyword}`;
  }
}

/** Pick the most useful error: the deepest one, preferring unknown/missing keys over `oneOf` noise. */
function bestError(errors: ErrorObject[]): ErrorObject {
  const rank = (e: ErrorObject): number =>
    (e.keyword === 'additionalProperties' || e.keyword === 'required' ? 1000 : 0) +
    e.instancePath.split('/').length * 10 -
    (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if' ? 500 : 0);
  return [...errors].sort((a, b) => rank(b) - rank(a))[0] ?? { instancePath: '', keyword: 'invalid', params: {}, schemaPath: '', message: 'invalid' };
}

/**
 * Validate `value` against `schema`; on failure throw an InputError positioned at the
 * offending node of `root` (the loaded YAML value holding `value` at `basePath`).
 */
export function validateOrThrow(
  schema: JsonSchema,
  value: unknown,
  what: string,
  opts: { root?: unknown; basePath?: (string | number)[]; fallbackPos?: SourcePos } = {},
): void {
  const validate = compileSchema(schema);
  if (validate(value)) return;
  const errors = validate.errors ?? [];
  const e = bestError(errors);
  const path = splitPointer(e.instancePath);
  const fullPath = [...(opts.basePath ?? []), ...path];
  let key = path;
  if (e.keyword === 'additionalProperties') key = [...path, String((e.params as Record<string, unknown>).additionalProperty)];
  const pos =
    posOfPath(opts.root ?? value, [...(opts.basePath ?? []), ...key]) ??
    posOfPath(opts.root ?? value, fullPath) ??
    opts.fallbackPos;
  throw new InputError(describeAjvError(e, what), pos);
}

/**
 * Validate module arguments: as they are first; only if that fails, with scalar coercion on a
 * copy. Returns the (possibly coerced) arguments, or the errors of the uncoerced validation. With
 * `defaults` (at run time) the returned copy has the schema's defaults filled in.
 */
export function validateArgs(schema: JsonSchema, args: unknown, opts: { defaults?: boolean } = {}): { ok: true; value: unknown } | { ok: false; errors: ErrorObject[] } {
  // With defaults the value is filled in: work on a copy, the task's own arguments stay as loaded.
  const value = opts.defaults ? structuredClone(args) : args;
  const plain = compileSchema(schema, { defaults: opts.defaults });
  if (plain(value)) return { ok: true, value };
  const errors = plain.errors ?? [];
  const copy = structuredClone(args);
  if (compileSchema(schema, { coerce: true, defaults: opts.defaults })(copy)) return { ok: true, value: copy };
  return { ok: false, errors };
}
