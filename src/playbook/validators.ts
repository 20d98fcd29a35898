/**
 * The static input schemas (playbook, task keywords, inventory), validated with code compiled at
 * build time when it matches (`src/build/static-validators.ts` writes `validators.gen.js`;
 * sources run by the tests have none and compile at run time, which costs ~0.15 s per run). The
 * generated validators are handed to `compileSchema`'s cache, so every caller gets them without
 * knowing.
 */
import type { ValidateFunction } from 'ajv';
import { fingerprint, registerCompiled } from '../load/schema.js';
import type { JsonSchema } from '../core/module.js';
import { inventorySchema } from '../inventory/schema.js';
import { basePlaybookSchema, importEntrySchema, playEntrySchema, taskKeywordSchema } from './schema.js';

/** The schemas compiled at build time, by export name. */
export const PRECOMPILED: Record<string, () => JsonSchema> = { basePlaybook: basePlaybookSchema, playEntry: playEntrySchema, importEntry: importEntrySchema, taskKeywords: taskKeywordSchema, inventory: () => inventorySchema };

/** A hash of the schemas as this build has them: generated code for other schemas is not used. */
export function schemaHash(): string {
  return fingerprint(Object.entries(PRECOMPILED).map(([k, s]) => [k, s()]));
}

/** Use the build's generated validators when present and made from these schemas. @returns whether they were used */
export async function usePrecompiled(): Promise<boolean> {
  let gen: Record<string, unknown>;
  try {
    gen = (await import(new URL('../playbook/validators.gen.js', import.meta.url).href)) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (gen.hash !== schemaHash()) return false;
  for (const [name, schema] of Object.entries(PRECOMPILED)) {
    const fn = gen[name];
    if (typeof fn === 'function') registerCompiled(schema(), fn as ValidateFunction);
  }
  return true;
}

await usePrecompiled();
