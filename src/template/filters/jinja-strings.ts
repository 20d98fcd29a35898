/**
 * Jinja2's builtin string filters as ansible-core 2.19 runs them (Jinja 3.1): `lower`, `upper`,
 * `capitalize`, `title`, `trim`, `replace`, `center`, `indent`, `truncate`, `wordcount`,
 * `wordwrap`, `format`, `string`, `urlencode`, `escape`, `striptags`, `filesizeformat`,
 * `pprint`, `tojson`, `safe`.
 */
import type { FilterDef } from '../plugins.js';
import { ExprError, isMap, num } from '../values.js';
import { intArg, opt, req } from './args.js';
import { filter, text, touch } from './def.js';
import { percentFormat, pformat, textwrap } from './pyformat.js';
import { dumps } from './pyjson.js';
import { capitalize, center, replace, splitlines, strip, pyLen } from './pytext.js';

/** Python's `urllib.parse.quote(s, safe)` over UTF-8. */
export function urlQuote(s: string, safe: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(b);
    if (/[A-Za-z0-9_.\-~]/.test(ch) || (b < 0x80 && safe.includes(ch))) out += ch;
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function jinjaUrlQuote(v: unknown, forQs: boolean): string {
  const s = urlQuote(text(v), forQs ? '' : '/');
  return forQs ? s.replace(/%20/g, '+') : s;
}

/** markupsafe's `escape`. */
export function htmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#39;').replace(/"/g, '&#34;');
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\xa0' };

/** markupsafe's `Markup.striptags()`: drop comments and tags, collapse whitespace, unescape entities. */
function stripTags(s: string): string {
  const noComments = s.replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  const noTags = noComments.replace(/<[^>]*>/g, '');
  const collapsed = noTags.split(/\s+/).filter((x) => x !== '').join(' ');
  return collapsed.replace(/&(#x[0-9a-fA-F]+|#\d+|[A-Za-z]+);/g, (m, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(Number(e.slice(1)));
    return ENTITIES[e] ?? m;
  });
}

function fileSize(value: unknown, binary: boolean): string {
  const v = typeof value === 'string' ? Number(value.trim()) : num(value);
  if (Number.isNaN(v) && typeof value === 'string') throw new ExprError(`could not convert string to float: '${value}'`);
  const base = binary ? 1024 : 1000;
  const prefixes = binary ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'] : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  if (v === 1) return '1 Byte';
  if (v < base) return `${Math.trunc(v)} Bytes`;
  let unit = base;
  let prefix = prefixes[0] ?? '';
  for (let i = 0; i < prefixes.length; i++) {
    unit = base ** (i + 2);
    prefix = prefixes[i] ?? '';
    if (v < unit) break;
  }
  return `${((base * v) / unit).toFixed(1)} ${prefix}`;
}

/** Jinja's `do_title`: words start after `-`, whitespace, `(`, `{`, `[`, `<`. */
function title(s: string): string {
  return s
    .split(/([-\s({[<]+)/u)
    .filter((x) => x !== '')
    .map((item) => [...item].slice(0, 1).join('').toUpperCase() + [...item].slice(1).join('').toLowerCase())
    .join('');
}

function indent(s: string, width: unknown, first: boolean, blank: boolean): string {
  const indention = typeof width === 'string' ? width : ' '.repeat(Math.max(0, intArg(width)));
  const lines = splitlines(`${s}\n`);
  let rv: string;
  if (blank) rv = lines.join(`\n${indention}`);
  else {
    rv = lines.shift() ?? '';
    if (lines.length > 0) rv += `\n${lines.map((line) => (line ? indention + line : line)).join('\n')}`;
  }
  return first ? indention + rv : rv;
}

function truncate(s: string, length: number, killwords: boolean, end: string, leeway: number): string {
  if (length < pyLen(end)) throw new ExprError(`expected length >= ${pyLen(end)}, got ${length}`);
  if (leeway < 0) throw new ExprError(`expected leeway >= 0, got ${leeway}`);
  const cs = [...s];
  if (cs.length <= length + leeway) return s;
  const cut = cs.slice(0, length - pyLen(end)).join('');
  if (killwords) return cut + end;
  const at = cut.lastIndexOf(' ');
  return (at < 0 ? cut : cut.slice(0, at)) + end;
}

/** The string filters, by Jinja name. */
export const JINJA_STRING_FILTERS: Readonly<Record<string, FilterDef>> = {
  lower: filter({ fn: 'do_lower', params: [] }, (v) => text(v).toLowerCase()),
  upper: filter({ fn: 'do_upper', params: [] }, (v) => text(v).toUpperCase()),
  capitalize: filter({ fn: 'do_capitalize', params: [] }, (v) => capitalize(text(v))),
  title: filter({ fn: 'do_title', params: [] }, (v) => title(text(v))),
  trim: filter({ fn: 'do_trim', params: [opt('chars')] }, (v, a) => {
    const chars = a.get('chars');
    return strip(text(v), chars === null ? null : text(chars));
  }),
  replace: filter({ fn: 'do_replace', params: [req('old'), req('new'), opt('count')], hidden: 1 }, (v, a) => {
    const count = a.get('count');
    return replace(text(v), text(a.get('old')), text(a.get('new')), count === null ? -1 : intArg(count));
  }),
  center: filter({ fn: 'do_center', params: [opt('width', 80)] }, (v, a) => center(text(v), intArg(a.get('width')))),
  indent: filter({ fn: 'do_indent', params: [opt('width', 4), opt('first', false), opt('blank', false)] }, (v, a) =>
    indent(text(v), a.get('width'), Boolean(a.get('first')), Boolean(a.get('blank'))),
  ),
  truncate: filter({ fn: 'do_truncate', params: [opt('length', 255), opt('killwords', false), opt('end', '...'), opt('leeway')], hidden: 1 }, (v, a) => {
    const leeway = a.get('leeway');
    return truncate(text(v), intArg(a.get('length')), Boolean(a.get('killwords')), text(a.get('end')), leeway === null ? 5 : intArg(leeway));
  }),
  wordcount: filter({ fn: 'do_wordcount', params: [] }, (v) => (text(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length),
  wordwrap: filter(
    { fn: 'do_wordwrap', params: [opt('width', 79), opt('break_long_words', true), opt('wrapstring'), opt('break_on_hyphens', true)], hidden: 1 },
    (v, a) => {
      const wrap = a.get('wrapstring');
      const sep = wrap === null ? '\n' : text(wrap);
      const width = intArg(a.get('width'));
      return splitlines(text(v))
        .map((line) => textwrap(line, width, Boolean(a.get('break_long_words')), Boolean(a.get('break_on_hyphens'))).join(sep))
        .join(sep);
    },
  ),
  format: filter({ fn: 'do_format', params: [], varargs: true, varkw: true }, (v, a) => {
    const kw = a.extra;
    if (a.rest.length > 0 && Object.keys(kw).length > 0) throw new ExprError("can't handle positional and keyword arguments at the same time");
    return percentFormat(text(v), Object.keys(kw).length > 0 ? { ...kw } : [...a.rest]);
  }),
  string: filter({ fn: 'soft_str', params: [] }, (v) => text(v)),
  urlencode: filter({ fn: 'do_urlencode', params: [] }, (v) => {
    if (typeof v === 'string' || !(Array.isArray(v) || isMap(v))) return jinjaUrlQuote(v, false);
    const pairs: [unknown, unknown][] = isMap(v)
      ? Object.entries(v)
      : v.map((p) => {
          if (!Array.isArray(p) || p.length !== 2) throw new ExprError(`too many values to unpack (expected 2)`);
          return [p[0], p[1]];
        });
    return pairs.map(([k, x]) => `${jinjaUrlQuote(k, true)}=${jinjaUrlQuote(x, true)}`).join('&');
  }),
  escape: filter({ fn: 'escape', params: [] }, (v) => htmlEscape(text(v))),
  e: filter({ fn: 'escape', params: [] }, (v) => htmlEscape(text(v))),
  forceescape: filter({ fn: 'do_forceescape', params: [] }, (v) => htmlEscape(text(v))),
  safe: filter({ fn: 'do_mark_safe', params: [] }, (v) => text(v)),
  striptags: filter({ fn: 'do_striptags', params: [] }, (v) => stripTags(text(v))),
  filesizeformat: filter({ fn: 'do_filesizeformat', params: [opt('binary', false)] }, (v, a) => fileSize(v, Boolean(a.get('binary')))),
  pprint: filter({ fn: 'do_pprint', params: [] }, (v) => pformat(touch(v))),
  tojson: filter({ fn: 'do_tojson', params: [opt('indent')], hidden: 1 }, (v, a) => {
    const ind = a.get('indent');
    const json = dumps(v, { sortKeys: true, indent: ind === null ? null : typeof ind === 'string' ? ind : intArg(ind) });
    return json.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/'/g, '\\u0027');
  }),
};


