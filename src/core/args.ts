/**
 * Module arguments and results, declared once.
 *
 * A module declares its arguments as a TypeBox schema. That one declaration is
 *  - the JSON Schema ajv validates the rendered arguments with (and the editor schema in `schemas/`),
 *  - the defaults ajv fills in (`useDefaults`) before `run` is called — never `??` in `run`,
 *  - the static type of `run`'s `args` ({@link Args}: a property with a default is present),
 *  - the generated reference (`kplay modules NAME`, `docs/modules.md`).
 *
 * TypeBox builds plain JSON Schema objects (its markers are symbols, which ajv and JSON ignore), so
 * nothing is translated: what the type says is what ajv checks. (`Type` builds the common
 * constructors without loading TypeBox; see typebox-lite.ts.)
 *
 * @example
 * const schema = Type.Object({
 *   url: Type.String({ description: 'URL to probe.' }),
 *   timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds.' }), 10),
 * }, { additionalProperties: false });
 * // Args<typeof schema> is { url: string; timeout: number }
 */
import type { SchemaOptions, Static, TArray, TObject, TOptional, TProperties, TSchema, TUnsafe } from '@sinclair/typebox';
import { Type } from './typebox-lite.js';

export { Type } from './typebox-lite.js';
export type { Static, TObject, TSchema } from '@sinclair/typebox';

/** Type-level mark of a property declared with {@link Default} (no runtime key). */
declare const defaulted: unique symbol;

/** An optional property with a default: absent in the input, always present in `run`'s `args`. */
export type TDefault<T extends TSchema> = TOptional<T> & { readonly [defaulted]: true };

/**
 * Declare an optional property with a default value. ajv fills the default in before the
 * module runs, and {@link Args} types the property as always present.
 * @example timeout: Default(Type.Number({ description: 'Seconds to wait.' }), 300)
 */
export function Default<T extends TSchema>(schema: T, value: Static<T>): TDefault<T> {
  return Type.Optional({ ...schema, default: value } as T) as TDefault<T>;
}

/**
 * One of a fixed set of strings, as a JSON Schema `enum` (validation errors then list the allowed
 * values).
 * @example state: Default(StringEnum(['present', 'absent'], { description: 'Wanted state.' }), 'present')
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, enum: [...values] });
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Keys of `P` present after defaults: required properties and properties with a default. */
type PresentKeys<P extends TProperties> = {
  [K in keyof P]: P[K] extends { readonly [defaulted]: true } ? K : P[K] extends TOptional<TSchema> ? never : K;
}[keyof P];

/**
 * The value a schema describes once ajv has filled in the defaults: like TypeBox's `Static`, but a
 * property declared with {@link Default} is not optional (in nested objects and lists too).
 */
export type Args<S extends TSchema> =
  S extends TObject<infer P>
    ? Simplify<{ [K in PresentKeys<P>]: Args<P[K]> } & { [K in Exclude<keyof P, PresentKeys<P>>]?: Args<P[K]> }>
    : S extends TArray<infer I>
      ? Args<I>[]
      : Static<S>;
