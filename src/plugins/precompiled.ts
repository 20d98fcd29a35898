/**
 * The built-in modules' schemas compiled at build time (`src/build/module-validators.ts` writes
 * `dist/modules/_validators/<module>.js`). {@link usePrecompiledModule} hands a module's
 * generated validators to `compileSchema`'s cache when they were made from the schemas the module
 * has now, so a run validates arguments and results without compiling anything (an ajv
 * compilation costs ~50 ms for the first schema of each variant: it compiles the meta-schema too).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { fingerprint, registerCompiled, type CompileOptions } from '../load/schema.js';
import type { AnyModule } from '../core/module.js';

/** Directory of the generated files, inside the built-in modules' directory. */
export const VALIDATOR_DIR = '_validators';

/** What is compiled per module: the arguments with defaults, as written and coerced; the result. */
export const MODULE_VARIANTS = {
  args: { schema: 'schema', opts: { defaults: true } },
  argsCoerced: { schema: 'schema', opts: { coerce: true, defaults: true } },
  result: { schema: 'result', opts: {} },
} as const satisfies Record<string, { schema: 'schema' | 'result'; opts: CompileOptions }>;

/** The fingerprint of a module's schemas (generated validators for other schemas are not used). */
export const moduleFingerprint = (mod: AnyModule): string => fingerprint([mod.schema, mod.result]);

/**
 * Use the generated validators of a built-in module in `builtinDir`, when present and made from
 * its schemas. @returns whether they were used
 */
export async function usePrecompiledModule(mod: AnyModule, builtinDir: string): Promise<boolean> {
  let gen: Record<string, unknown>;
  try {
    gen = (await import(pathToFileURL(path.join(builtinDir, VALIDATOR_DIR, `${mod.name}.js`)).href)) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (gen.hash !== moduleFingerprint(mod)) return false;
  for (const [name, v] of Object.entries(MODULE_VARIANTS)) {
    const fn = gen[name];
    if (typeof fn === 'function') registerCompiled(mod[v.schema], fn as ValidateFunction, v.opts);
  }
  return true;
}
