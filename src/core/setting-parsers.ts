/**
 * The value parsers of the settings table (./settings-table.ts): kplay's own (booleans, bounded
 * numbers) and ansible-core's config types (`pathspec`, `pathlist`, `path`, `boolean`, `integer`)
 * as lib/ansible/config/manager.py reads them.
 */
import os from 'node:os';
import path from 'node:path';
import { unfrackPath, unquote } from './ansible-config.js';
import type { Env, SettingSpec } from './setting-spec.js';

/** The text as it is (an empty value kept). */
export const verbatim = (raw: string): string => raw;
/** The text, or `undefined` when empty. */
export const optional = (raw: string): string | undefined => (raw === '' ? undefined : raw);

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);
/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (any case); empty is false. */
export function boolean(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new Error('use 1 or 0 (also true/false, yes/no, on/off)');
}

/** A number of at least `min` (`above`: strictly more), `integer` or not; empty gives `fallback`. */
export function number(fallback: number, o: { min: number; above?: boolean; integer?: boolean }): (raw: string) => number {
  return (raw) => {
    if (raw.trim() === '') return fallback;
    const v = Number(raw);
    const kind = o.integer ? 'a whole number' : 'a number';
    const bound = o.above ? `more than ${o.min}` : `at least ${o.min}`;
    if (!Number.isFinite(v) || (o.integer && !Number.isInteger(v)) || (o.above ? v <= o.min : v < o.min)) throw new Error(`use ${kind} ${bound}`);
    return v;
  };
}

/** ansible-core's `pathspec`: `:`-separated, each path with `~`/`$VAR` expanded and made absolute against `base`. */
export const pathspec = (raw: string, base: string, env: Env = process.env): string[] => raw.split(path.delimiter).map((p) => unfrackPath(p.replace('{{CWD}}', process.cwd()), base, env));
/** ansible-core's `pathlist`: `,`-separated, trimmed, each path resolved as in {@link pathspec}. */
export const pathlist = (raw: string, base: string, env: Env = process.env): string[] => raw.split(',').map((p) => unfrackPath(unquote(p.trim()), base, env));
/** ansible-core's `path`: one path resolved as in {@link pathspec}. */
export const onePath = (raw: string, base: string, env: Env): string => unfrackPath(raw, base, env);
/** ansible-core's `boolean` (not strict): `y`/`yes`/`on`/`1`/`true`/`t` (any case) are true, anything else false. */
export const ansibleBool = (raw: string): boolean => ['y', 'yes', 'on', '1', 'true', 't'].includes(raw.trim().toLowerCase());
/** ansible-core's `integer`: a whole number (`5`, `5.0`). */
export function ansibleInt(min: number): (raw: string) => number {
  return (raw) => {
    const v = Number(raw.trim());
    if (raw.trim() === '' || !Number.isInteger(v) || v < min) throw new Error(`use a whole number at least ${min}`);
    return v;
  };
}
/** Ansible's default for a path list under `ANSIBLE_HOME` (default `~/.ansible`). */
export const underAnsibleHome = (sub: string, rest: string[]) => (env: Env): string[] => [path.join(env.ANSIBLE_HOME ? unfrackPath(env.ANSIBLE_HOME, process.cwd(), env) : path.join(env.HOME || os.homedir(), '.ansible'), sub), ...rest];
/** An Ansible setting kplay accepts and does not act on: its text is kept as it is. */
export function ignoredAnsible(name: string, env: string, key: string, why: string): SettingSpec<string | undefined> {
  return { env, type: 'Ansible setting (ignored)', default: undefined, defaultDoc: '(Ansible\'s)', doc: `Accepted and ignored: ${why}`, parse: verbatim, ansible: { name, env, ini: ['defaults', key], parse: verbatim, note: why } };
}
