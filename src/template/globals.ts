/**
 * Jinja2's default global objects that are not plain functions of the evaluator — `cycler`,
 * `joiner`, `lipsum` — and ansible-core's `now`, as Jinja2 3.1 (`jinja2.utils`) and ansible-core
 * 2.19 (`_jinja_plugins._now`) define them.
 */
import { PyDatetime } from './filters/pytime.js';
import { ExprError, isInt, PyObject, truthy, typeName } from './values.js';
import { strRepr } from './pyrepr.js';

/** Python's `randrange(lo, hi)` over `Math.random` (the value is random in Jinja too). */
function randrange(lo: number, hi: number): number {
  if (hi <= lo) throw new ExprError(`empty range for randrange() (${lo}, ${hi}, ${hi - lo})`);
  return lo + Math.floor(Math.random() * (hi - lo));
}

/** Positional and keyword arguments bound to a Python signature `f(a=…, b=…)`. */
function bindArgs(fn: string, names: readonly string[], defaults: readonly unknown[], args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): unknown[] {
  if (args.length > names.length) throw new ExprError(`${fn}() takes from 0 to ${names.length} positional arguments but ${args.length} were given`);
  const out = names.map((_, i) => (i < args.length ? args[i] : defaults[i]));
  for (const [k, v] of Object.entries(kwargs)) {
    const i = names.indexOf(k);
    if (i < 0) throw new ExprError(`${fn}() got an unexpected keyword argument '${k}'`);
    if (i < args.length) throw new ExprError(`${fn}() got multiple values for argument '${k}'`);
    out[i] = v;
  }
  return out;
}

/** An int argument (Python's `range()` and `randrange()` take ints and bools only). */
function intOf(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isInt(v)) return v;
  throw new ExprError(`'${typeName(v)}' object cannot be interpreted as an integer`);
}

/** Jinja's `Cycler`: `next()`, `reset()`, `current`, `items`, `pos`. */
export class Cycler extends PyObject {
  readonly pyType = 'Cycler';
  private pos = 0;
  constructor(private readonly items: readonly unknown[]) {
    super();
    if (items.length === 0) throw new ExprError('at least one item has to be provided');
  }

  str(): string {
    return '<jinja2.utils.Cycler object>';
  }

  plain(): unknown {
    throw new ExprError("Type 'Cycler' is unsupported for variable storage.", undefined, 'call its next() method: `c.next()`');
  }

  attr(name: string): unknown {
    switch (name) {
      case 'items':
        return [...this.items];
      case 'pos':
        return this.pos;
      case 'current':
        return this.items[this.pos];
      case 'reset':
        return () => {
          this.pos = 0;
          return null;
        };
      case 'next':
        return () => {
          const v = this.items[this.pos];
          this.pos = (this.pos + 1) % this.items.length;
          return v;
        };
      default:
        return undefined;
    }
  }
}

/** Jinja's `Joiner`: calling it gives `''` the first time and its separator afterwards. */
export class Joiner extends PyObject {
  readonly pyType = 'Joiner';
  private used = false;
  constructor(private readonly sep: unknown) {
    super();
  }

  str(): string {
    return '<jinja2.utils.Joiner object>';
  }

  plain(): unknown {
    throw new ExprError("Type 'Joiner' is unsupported for variable storage.", undefined, 'call it: `j()`');
  }

  attr(name: string): unknown {
    return name === 'sep' ? this.sep : name === 'used' ? this.used : undefined;
  }

  override call(args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): unknown {
    if (args.length > 0 || Object.keys(kwargs).length > 0) throw new ExprError('Joiner.__call__() takes 1 positional argument but more were given');
    if (this.used) return this.sep;
    this.used = true;
    return '';
  }
}

const LOREM_IPSUM_WORDS = `a ac accumsan ad adipiscing aenean aliquam aliquet amet ante aptent arcu at
auctor augue bibendum blandit class commodo condimentum congue consectetuer
consequat conubia convallis cras cubilia cum curabitur curae cursus dapibus
diam dictum dictumst dignissim dis dolor donec dui duis egestas eget eleifend
elementum elit enim erat eros est et etiam eu euismod facilisi facilisis fames
faucibus felis fermentum feugiat fringilla fusce gravida habitant habitasse hac
hendrerit hymenaeos iaculis id imperdiet in inceptos integer interdum ipsum
justo lacinia lacus laoreet lectus leo libero ligula litora lobortis lorem
luctus maecenas magna magnis malesuada massa mattis mauris metus mi molestie
mollis montes morbi mus nam nascetur natoque nec neque netus nibh nisi nisl non
nonummy nostra nulla nullam nunc odio orci ornare parturient pede pellentesque
penatibus per pharetra phasellus placerat platea porta porttitor posuere
potenti praesent pretium primis proin pulvinar purus quam quis quisque rhoncus
ridiculus risus rutrum sagittis sapien scelerisque sed sem semper senectus sit
sociis sociosqu sodales sollicitudin suscipit suspendisse taciti tellus tempor
tempus tincidunt torquent tortor tristique turpis ullamcorper ultrices
ultricies urna ut varius vehicula vel velit venenatis vestibulum vitae vivamus
viverra volutpat vulputate`.split(/\s+/);

/**
 * Jinja's `lipsum(n=5, html=True, min=20, max=100)` (`generate_lorem_ipsum`): `n` paragraphs of
 * `min`..`max-1` random words with commas and full stops where Jinja puts them; joined by a blank
 * line, or each in `<p>…</p>` on its own line when `html` is true. The words are random, as in Jinja.
 */
export function lipsum(args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): string {
  const [nV, html, minV, maxV] = bindArgs('generate_lorem_ipsum', ['n', 'html', 'min', 'max'], [5, true, 20, 100], args, kwargs);
  const n = intOf(nV);
  const min = intOf(minV);
  const max = intOf(maxV);
  const result: string[] = [];
  for (let k = 0; k < n; k++) {
    let nextCapitalized = true;
    let lastComma = 0;
    let lastFullstop = 0;
    let last = '';
    const p: string[] = [];
    const count = randrange(min, max);
    for (let idx = 0; idx < count; idx++) {
      let word: string;
      do word = LOREM_IPSUM_WORDS[Math.floor(Math.random() * LOREM_IPSUM_WORDS.length)] ?? 'a';
      while (word === last);
      last = word;
      if (nextCapitalized) {
        word = word.charAt(0).toUpperCase() + word.slice(1);
        nextCapitalized = false;
      }
      if (idx - randrange(3, 8) > lastComma) {
        lastComma = idx;
        lastFullstop += 2;
        word += ',';
      }
      if (idx - randrange(10, 20) > lastFullstop) {
        lastComma = lastFullstop = idx;
        word += '.';
        nextCapitalized = true;
      }
      p.push(word);
    }
    let text = p.join(' ');
    if (text.endsWith(',')) text = `${text.slice(0, -1)}.`;
    else if (!text.endsWith('.')) text += '.';
    result.push(text);
  }
  return truthy(html) ? result.map((x) => `<p>${x}</p>`).join('\n') : result.join('\n\n');
}

/** Jinja's `cycler(*items)`. */
export function cycler(args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): Cycler {
  if (Object.keys(kwargs).length > 0) throw new ExprError(`Cycler.__init__() got an unexpected keyword argument ${strRepr(Object.keys(kwargs)[0] ?? '')}`);
  return new Cycler(args);
}

/** Jinja's `joiner(sep=', ')`. */
export function joiner(args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): Joiner {
  const [sep] = bindArgs('Joiner.__init__', ['sep'], [', '], args, kwargs);
  return new Joiner(sep);
}

/**
 * ansible-core's `now(utc=False, fmt=None)`: the current time as a naive `datetime` (local, or UTC
 * when `utc` is true), or its `strftime(fmt)` text when `fmt` is given (and not empty).
 */
export function now(args: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): unknown {
  const [utc, fmt] = bindArgs('_now', ['utc', 'fmt'], [false, null], args, kwargs);
  const d = new Date();
  const micro = d.getMilliseconds() * 1000;
  const dt = truthy(utc)
    ? new PyDatetime(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), micro)
    : new PyDatetime(d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), micro);
  if (!truthy(fmt)) return dt;
  const strftime = dt.attr('strftime') as (a: unknown[]) => unknown;
  return strftime([fmt]);
}
