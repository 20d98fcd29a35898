/**
 * The `ini` lookup (ansible-core 2.19 `plugins/lookup/ini.py`): a key (or, with `re=true`, every
 * key matching a regular expression) of a section of an INI file, or of a Java properties file
 * (`type=properties`), read as Python's `configparser` reads it: `=`/`:` delimiters, `#`/`;`
 * comment lines, indented continuation lines, a `DEFAULT` section every section inherits, keys
 * lower-cased unless `case_sensitive=true`, no interpolation.
 */
import { readFileSync } from 'node:fs';
import type { Kwargs, PluginContext } from './plugins.js';
import { ExprError } from './values.js';
import { text } from './filters/def.js';
import { compile, match } from './filters/pyregex.js';
import { convertBoolLoose } from './lookup-args.js';
import { findFile } from './lookup-files.js';

/** The options of the ini lookup and their defaults. */
const DEFAULTS: Readonly<Record<string, unknown>> = {
  type: 'ini',
  file: 'ansible.ini',
  section: 'global',
  re: false,
  encoding: 'utf-8',
  default: '',
  case_sensitive: false,
  allow_no_value: false,
  allow_none: false,
  interpolation: false,
};

/** Sections → keys → value (`null`: a key without a value, when allowed). */
type Parsed = Map<string, Map<string, string[] | null>>;

/** Parse INI text as configparser does (strict: duplicate sections and options are errors). */
function parseIni(content: string, file: string, caseSensitive: boolean, allowNoValue: boolean): Parsed {
  const out: Parsed = new Map([['DEFAULT', new Map()]]);
  let section: Map<string, string[] | null> | undefined;
  let option: string | undefined;
  let indent = 0;
  const lines = content.split(/\r\n|\r|\n/);
  lines.forEach((raw, i) => {
    const stripped = raw.trim();
    if (/^[#;]/.test(stripped)) return;
    if (stripped === '') {
      const cur = option !== undefined ? section?.get(option) : undefined;
      if (cur) cur.push('');
      return;
    }
    const level = raw.length - raw.trimStart().length;
    const cur = option !== undefined ? section?.get(option) : undefined;
    if (section && option !== undefined && cur !== undefined && cur !== null && level > indent) {
      cur.push(stripped);
      return;
    }
    indent = level;
    const header = /^\[(.+)\]/.exec(stripped);
    if (header) {
      const name = header[1] ?? '';
      if (name !== 'DEFAULT' && out.has(name)) throw new ExprError(`While reading from '${file}' [line ${i + 1}]: section '${name}' already exists`);
      section = out.get(name) ?? new Map<string, string[] | null>();
      out.set(name, section);
      option = undefined;
      return;
    }
    if (!section) throw new ExprError(`File contains no section headers.\nfile: '${file}', line: ${i + 1}\n'${raw}'`);
    const opt = /^(.*?)\s*([=:])\s*(.*)$/.exec(stripped);
    if (!opt && !allowNoValue) throw new ExprError(`Source contains parsing errors: '${file}'\n\t[line ${i + 1}]: '${raw}'`);
    const keyRaw = opt ? (opt[1] ?? '').trimEnd() : stripped;
    const key = caseSensitive ? keyRaw : keyRaw.toLowerCase();
    if (section.has(key)) throw new ExprError(`Duplicate option in '${file}'.`);
    section.set(key, opt ? [(opt[3] ?? '').trim()] : null);
    option = key;
  });
  return out;
}

/** configparser's value: the lines joined, trailing blank lines dropped. */
const joined = (v: string[] | null): string | null => (v === null ? null : v.join('\n').trimEnd());

/** Ansible's deprecated inline form `key section=s file=f`: the words, each option's value kept with its spaces. */
function inlineParams(term: string, names: readonly string[]): string[] {
  const params = new Map<string, string>();
  const order: string[] = [];
  let current = 'key';
  term.split(/\s+/).filter((w) => w !== '').forEach((word, i) => {
    if (word.includes('=')) for (const k of names) if (word.includes(`${k}=`)) current = k;
    const have = params.get(current) ?? '';
    if (i === 0 || have === '') {
      params.set(current, word);
      order.push(current);
    } else params.set(current, `${have} ${word}`);
  });
  return order.map((k) => params.get(k) ?? '');
}

/** The ini lookup: one result per term (several with `re=true`); a missing key gives `default`. */
export function iniLookup(terms: unknown[], kwargs: Kwargs, ctx: PluginContext): unknown[] {
  for (const k of Object.keys(kwargs)) {
    if (!Object.prototype.hasOwnProperty.call(DEFAULTS, k)) throw new ExprError(`Unrecognized option(s) for lookup plugin 'ini': ${k}`);
  }
  const base = { ...DEFAULTS, ...kwargs };
  const ret: unknown[] = [];
  for (const t of terms) {
    const term = text(t);
    const opts: Record<string, unknown> = { ...base };
    let key = term;
    if (term.includes('=') || term.trim().includes(' ')) {
      let found = false;
      for (const p of inlineParams(term, Object.keys(DEFAULTS))) {
        const eq = p.indexOf('=');
        if (eq >= 0) {
          const name = p.slice(0, eq);
          if (!Object.prototype.hasOwnProperty.call(DEFAULTS, name)) throw new ExprError(`'${name}' is not a valid option.`);
          opts[name] = p.slice(eq + 1);
        } else if (!found) {
          key = p;
          found = true;
        }
      }
      if (!found) throw new ExprError(`No key to look up was provided as first term within string inline options: ${term}`);
    }
    const type = text(opts.type);
    if (type !== 'ini' && type !== 'properties') throw new ExprError(`Invalid value '${type}' for the ini lookup's type: choose 'ini' or 'properties'`);
    const file = text(opts.file);
    const tried: string[] = [];
    const path = findFile(ctx, 'files', file, tried);
    if (!path) throw new ExprError(`Unable to find '${file}' in expected paths`, undefined, `looked for ${tried.join(', ')}`);
    let content: string;
    try {
      content = new TextDecoder(text(opts.encoding)).decode(readFileSync(path));
    } catch (e) {
      throw new ExprError(`Unable to read '${file}': ${e instanceof Error ? e.message : String(e)}`);
    }
    let section = text(opts.section);
    if (type === 'properties') {
      content = `[java_properties]\n${content}`;
      section = 'java_properties';
    }
    const allowNone = convertBoolLoose(opts.allow_no_value) || convertBoolLoose(opts.allow_none);
    const parsed = parseIni(content, file, convertBoolLoose(opts.case_sensitive), allowNone);
    const defaults = parsed.get('DEFAULT') ?? new Map<string, string[] | null>();
    const own = parsed.get(section);
    if (!own) throw new ExprError(`No section '${section}' in '${file}'.`);
    const items = new Map(defaults);
    for (const [k, v] of own) items.set(k, v);
    if (convertBoolLoose(opts.re)) {
      const rx = compile(key);
      for (const [k, v] of items) if (match(rx, k)) ret.push(joined(v));
      continue;
    }
    const lookupKey = convertBoolLoose(opts.case_sensitive) ? key : key.toLowerCase();
    const v = items.has(lookupKey) ? joined(items.get(lookupKey) ?? null) : opts.default;
    if (v !== null && v !== undefined) ret.push(v);
  }
  return ret;
}
