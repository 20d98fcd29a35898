/**
 * Python's two string-formatting languages, as templates use them: `'%s-%02d' % (a, b)` (and
 * the `format` filter) and `'{}-{:>3}'.format(a, b)`.
 */
import { percentFormat as printf } from './filters/pyformat.js';
import { toFixedEven } from './filters/pynum.js';
import { ExprError, isFloat, isMap, isNumber, num, typeName } from './values.js';
import { pyRepr, pyStr } from './pyrepr.js';

/** Apply a format spec (`[[fill]align][sign][#][0][width][,][.precision][type]`) to a value. */
export function formatSpec(value: unknown, spec: string): string {
  const m = /^(?:(.)?([<>=^]))?([+\- ])?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/.exec(spec);
  if (!m) throw new ExprError(`invalid format specifier '${spec}'`);
  const [, fillCh, alignCh, sign = '-', alt, zero, widthS, group, precS, type] = m;
  const width = widthS ? Number(widthS) : 0;
  const prec = precS !== undefined ? Number(precS) : undefined;
  let body: string;
  let numeric = false;
  let negative = false;
  if (type === undefined && !isNumber(value) && typeof value !== 'boolean') {
    body = pyStr(value);
    if (prec !== undefined) body = body.slice(0, prec);
  } else if (type === 's') {
    if (typeof value !== 'string') throw new ExprError(`Unknown format code 's' for object of type '${typeName(value)}'`);
    body = prec !== undefined ? value.slice(0, prec) : value;
  } else {
    if (!isNumber(value) && typeof value !== 'boolean') throw new ExprError(`Unknown format code '${type ?? ''}' for object of type '${typeName(value)}'`);
    numeric = true;
    const n = num(value);
    negative = n < 0 || Object.is(n, -0);
    const a = Math.abs(n);
    switch (type) {
      case undefined:
        body = isFloat(value) ? (prec !== undefined ? a.toPrecision(prec) : pyStr(a)) : prec !== undefined ? a.toPrecision(prec) : typeof value === 'bigint' ? String(value < 0n ? -value : value) : String(a);
        break;
      case 'd':
      case 'n':
        if (isFloat(value)) throw new ExprError("Unknown format code 'd' for object of type 'float'");
        body = typeof value === 'bigint' ? String(value < 0n ? -value : value) : String(a);
        break;
      case 'f':
      case 'F':
        body = toFixedEven(a, prec ?? 6);
        break;
      case '%':
        body = `${toFixedEven(a * 100, prec ?? 6)}%`;
        break;
      case 'e':
      case 'E': {
        const s = a.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
        body = type === 'E' ? s.toUpperCase() : s;
        break;
      }
      case 'g':
      case 'G':
        body = String(Number(a.toPrecision(prec ?? 6)));
        break;
      case 'x':
      case 'X':
        body = (alt ? '0x' : '') + Math.trunc(a).toString(16);
        if (type === 'X') body = body.toUpperCase();
        break;
      case 'o':
        body = (alt ? '0o' : '') + Math.trunc(a).toString(8);
        break;
      case 'b':
        body = (alt ? '0b' : '') + Math.trunc(a).toString(2);
        break;
      case 'c':
        body = String.fromCodePoint(Math.trunc(a));
        break;
      default:
        body = String(a);
    }
    if (group) {
      const [int = '', frac] = body.split('.');
      body = int.replace(/\B(?=(\d{3})+(?!\d))/g, group) + (frac !== undefined ? `.${frac}` : '');
    }
  }
  const signText = numeric ? (negative ? '-' : sign === '+' ? '+' : sign === ' ' ? ' ' : '') : '';
  const fill = fillCh ?? (zero && numeric && !alignCh ? '0' : ' ');
  const align = alignCh ?? (zero && numeric ? '=' : numeric ? '>' : '<');
  const total = signText.length + body.length;
  const pad = Math.max(0, width - total);
  switch (align) {
    case '<':
      return signText + body + fill.repeat(pad);
    case '>':
      return fill.repeat(pad) + signText + body;
    case '^':
      return fill.repeat(Math.floor(pad / 2)) + signText + body + fill.repeat(Math.ceil(pad / 2));
    default:
      return signText + fill.repeat(pad) + body;
  }
}

/** `'{} {name} {0:>3}'.format(…)`: Python's str.format. */
export function strFormat(template: string, args: unknown[], kwargs: Readonly<Record<string, unknown>>): string {
  let auto = 0;
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (all: string, field: string | undefined) => {
    if (all === '{{') return '{';
    if (all === '}}') return '}';
    const m = /^([^!:]*)(?:!([rsa]))?(?::(.*))?$/.exec(field ?? '');
    if (!m) throw new ExprError(`invalid format field '${all}'`);
    const [, ref = '', conv, spec = ''] = m;
    const [head = '', ...path] = ref.split(/\.|(?=\[)/);
    let value: unknown;
    if (head === '') value = args[auto++];
    else if (/^\d+$/.test(head)) value = args[Number(head)];
    else if (Object.prototype.hasOwnProperty.call(kwargs, head)) value = kwargs[head];
    else throw new ExprError(`KeyError: '${head}'`);
    if (value === undefined) throw new ExprError('Replacement index out of range for positional args tuple');
    for (const p of path) {
      const key = p.startsWith('[') ? p.slice(1, -1) : p;
      if (Array.isArray(value) && /^\d+$/.test(key)) value = value[Number(key)];
      else if (isMap(value) && Object.prototype.hasOwnProperty.call(value, key)) value = value[key];
      else throw new ExprError(`KeyError: '${key}'`);
    }
    if (conv === 'r' || conv === 'a') value = pyRepr(value);
    else if (conv === 's') value = pyStr(value);
    return formatSpec(value, spec);
  });
}

/**
 * `'%s=%d' % (a, b)` / `'%(name)s' % d`: Python's printf-style formatting (the `format` filter's
 * implementation). A tuple gives the arguments; anything else is one argument, and a mapping or
 * a list (it has `__getitem__`) may go unused without complaint, as in Python.
 */
export function percentFormat(template: string, values: unknown, isTuple: boolean): string {
  if (isTuple && Array.isArray(values)) return printf(template, values);
  if (isMap(values)) return printf(template, values);
  try {
    return printf(template, [values]);
  } catch (e) {
    if (Array.isArray(values) && e instanceof ExprError && e.message.includes('not all arguments converted')) return printf(template, []);
    throw e;
  }
}
