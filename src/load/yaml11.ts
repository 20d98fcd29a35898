/**
 * PyYAML's YAML 1.1 implicit resolver (yaml/resolver.py), which ansible-core's loader uses for
 * every file it reads: how a plain (untagged, unquoted) scalar becomes a bool (`yes`, `On`,
 * `FALSE`; not `y`/`n`), an int (`0b101`, octal `010`, `1_000`, hex, sexagesimal `1:30`), a float
 * (a dot is needed: `1e3` stays a string; `.inf`, `.nan`, `1:30.5`), null (`~`, `null`, empty) or
 * a string. Shared by kplay's Ansible-side loader (`yaml.ts`, `fast-yaml.ts`) and the
 * `from_yaml`/`to_yaml` filters.
 *
 * Timestamps (`2024-01-01`) stay strings: PyYAML makes them `datetime.date`/`datetime`, which
 * print the same in a template but which kplay has no value type for.
 */
import { Scalar, type ScalarTag } from 'yaml';

/** PyYAML's bool resolver. */
export const BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
/** PyYAML's float resolver. */
export const FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
/** PyYAML's int resolver. */
export const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
/** PyYAML's null resolver (the empty scalar included). */
export const NULL = /^(?:~|null|Null|NULL|)$/;
/** PyYAML's timestamp resolver. */
export const TIMESTAMP =
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/;

/** Python's `re.match('…$')` also matches before one trailing newline. */
function pyFull(re: RegExp, v: string): boolean {
  return re.test(v) || (v.endsWith('\n') && re.test(v.slice(0, -1)));
}

/** The type PyYAML's YAML 1.1 implicit resolvers give a plain scalar (`str` when none matches). */
export function resolvePlain(v: string): 'null' | 'bool' | 'float' | 'int' | 'merge' | 'timestamp' | 'value' | 'yaml' | 'str' {
  if (v === '') return 'null';
  const c = v[0] ?? '';
  if ('yYnNtTfFoO'.includes(c) && pyFull(BOOL, v)) return 'bool';
  if ('-+0123456789.'.includes(c) && pyFull(FLOAT, v)) return 'float';
  if ('-+0123456789'.includes(c) && pyFull(INT, v)) return 'int';
  if (c === '<' && pyFull(/^(?:<<)$/, v)) return 'merge';
  if ('~nN'.includes(c) && pyFull(NULL, v)) return 'null';
  if ('0123456789'.includes(c) && pyFull(TIMESTAMP, v)) return 'timestamp';
  if (c === '=' && pyFull(/^(?:=)$/, v)) return 'value';
  if ('!&*'.includes(c) && pyFull(/^(?:!|&|\*)$/, v)) return 'yaml';
  return 'str';
}

/** PyYAML's `construct_yaml_bool`. */
export function boolFromYaml(raw: string): boolean {
  return ['yes', 'true', 'on'].includes(raw.toLowerCase());
}

/** PyYAML's `construct_yaml_int` (underscores dropped; `0b`, `0x`, leading `0` octal, `a:b:c` base 60). */
export function intFromYaml(raw: string): number {
  let v = raw.replace(/_/g, '');
  let sign = 1;
  if (v.startsWith('-')) sign = -1;
  if (v.startsWith('-') || v.startsWith('+')) v = v.slice(1);
  if (v === '0') return 0;
  if (v.startsWith('0b')) return sign * parseInt(v.slice(2), 2);
  if (v.startsWith('0x')) return sign * parseInt(v.slice(2), 16);
  if (v.startsWith('0')) return sign * parseInt(v, 8);
  if (v.includes(':')) return sign * v.split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
  return sign * Number(v);
}

/** PyYAML's `construct_yaml_float`, as a JavaScript number. */
export function floatNumberFromYaml(raw: string): number {
  let v = raw.replace(/_/g, '').toLowerCase();
  let sign = 1;
  if (v.startsWith('-')) sign = -1;
  if (v.startsWith('-') || v.startsWith('+')) v = v.slice(1);
  if (v === '.inf') return sign * Infinity;
  if (v === '.nan') return NaN;
  return sign * (v.includes(':') ? v.split(':').reduce((acc, part) => acc * 60 + Number(part), 0) : Number(v));
}

/** A `yaml` library tag resolving plain scalars that match `test` (whole-scalar regexes, as PyYAML's). */
function tag(name: string, test: RegExp, make: (raw: string) => unknown, identify: (v: unknown) => boolean): ScalarTag {
  return { tag: `tag:yaml.org,2002:${name}`, default: true, test, identify, resolve: (raw: string) => new Scalar(make(raw)) };
}

/**
 * PyYAML's implicit scalar types as `yaml` library tags, for `schema: 'failsafe'` plus these as
 * `customTags` (order matters only where two could match, as in PyYAML: bool, float, int, null).
 */
export const YAML11_TAGS: readonly ScalarTag[] = [
  tag('bool', BOOL, boolFromYaml, (v) => typeof v === 'boolean'),
  tag('float', FLOAT, floatNumberFromYaml, (v) => typeof v === 'number' && !Number.isInteger(v)),
  tag('int', INT, intFromYaml, (v) => typeof v === 'number' && Number.isInteger(v)),
  tag('null', NULL, () => null, (v) => v === null || v === undefined),
];
