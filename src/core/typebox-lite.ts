/**
 * TypeBox's `Type` builder without loading TypeBox: its 200 ES module files cost ~0.15 s of
 * every `kplay run` and `kplay validate`, to build the plain JSON Schema objects the modules
 * declare at import. The constructors modules use (String, Number, Integer, Boolean, Null,
 * Unknown, Never, Literal, Unsafe, Optional, Object, Array, Union, Record keyed by strings) are built
 * here exactly as TypeBox 0.34 builds them — same keys, same order, TypeBox's global symbols
 * (`Symbol.for('TypeBox.Kind')`, …) — so the objects are interchangeable with TypeBox's
 * (test/unit/typebox-lite.test.ts compares every constructor with TypeBox's own). Any other
 * constructor, or an unusual form of these (a Record keyed by a union, `Optional(x, false)`),
 * loads TypeBox on first use and is TypeBox's. The static types are TypeBox's.
 */
import { createRequire } from 'node:module';
import type * as TypeBox from '@sinclair/typebox';

/** TypeBox's builder type (what `import { Type } from '@sinclair/typebox'` is). */
export type TypeBuilder = typeof TypeBox.Type;

const Kind = Symbol.for('TypeBox.Kind');
const OptionalKind = Symbol.for('TypeBox.Optional');

type Schema = Record<string | symbol, unknown>;
type Options = Record<string | symbol, unknown> | undefined;

/** TypeBox's `CreateType` in its default instance mode: options first, then the type's own keys. */
const create = (schema: Schema, options: Options): Schema => (options !== undefined ? { ...options, ...schema } : schema);
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null;

let full: TypeBuilder | undefined;
/** TypeBox itself (its CommonJS build, loaded synchronously), for the constructors not built here. */
function typebox(): TypeBuilder {
  full ??= (createRequire(import.meta.url)('@sinclair/typebox') as typeof TypeBox).Type;
  return full;
}
const delegate = (name: string, args: unknown[]): unknown => (Reflect.get(typebox(), name) as (...a: unknown[]) => unknown).apply(typebox(), args);

const lite: Record<string, (...args: never[]) => unknown> = {
  String: (options?: Options) => create({ [Kind]: 'String', type: 'string' }, options),
  Number: (options?: Options) => create({ [Kind]: 'Number', type: 'number' }, options),
  Integer: (options?: Options) => create({ [Kind]: 'Integer', type: 'integer' }, options),
  Boolean: (options?: Options) => create({ [Kind]: 'Boolean', type: 'boolean' }, options),
  Null: (options?: Options) => create({ [Kind]: 'Null', type: 'null' }, options),
  Unknown: (options?: Options) => create({ [Kind]: 'Unknown' }, options),
  Never: (options?: Options) => create({ [Kind]: 'Never', not: {} }, options),
  Literal: (value: string | number | boolean, options?: Options) => create({ [Kind]: 'Literal', const: value, type: typeof value }, options),
  Unsafe: (options: Schema = {}) => create({ [Kind]: options[Kind] ?? 'Unsafe' }, options),
  Optional: (schema: Schema, enable?: boolean) =>
    enable === false || !isSchema(schema) || schema[Kind] === 'MappedResult' ? delegate('Optional', [schema, enable]) : create({ ...schema, [OptionalKind]: 'Optional' }, undefined),
  Object: (properties: Record<string, Schema>, options?: Options) => {
    const required = Object.keys(properties).filter((k) => !(isSchema(properties[k]) && properties[k][OptionalKind] === 'Optional'));
    return create(required.length > 0 ? { [Kind]: 'Object', type: 'object', required, properties } : { [Kind]: 'Object', type: 'object', properties }, options);
  },
  Array: (items: Schema, options?: Options) => create({ [Kind]: 'Array', type: 'array', items }, options),
  Union: (types: Schema[], options?: Options) => {
    if (types.length === 0) return delegate('Union', [types, options]);
    if (types.length === 1) return create(types[0] as Schema, options);
    return create({ [Kind]: 'Union', anyOf: types }, options);
  },
  Record: (key: Schema, value: Schema, options: Options = {}) =>
    isSchema(key) && key[Kind] === 'String' && (key.pattern === undefined || typeof key.pattern === 'string')
      ? create({ [Kind]: 'Record', type: 'object', patternProperties: { [key.pattern ?? '^(.*)$']: value } }, options)
      : delegate('Record', [key, value, options]),
};

/**
 * The schema builder modules declare their arguments and results with: TypeBox's `Type`, its
 * common constructors built without loading TypeBox.
 */
export const Type: TypeBuilder = new Proxy(lite, {
  get(target, name) {
    if (typeof name === 'string' && Object.hasOwn(target, name)) return target[name];
    const v: unknown = Reflect.get(typebox(), name);
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(typebox()) : v;
  },
}) as unknown as TypeBuilder;
