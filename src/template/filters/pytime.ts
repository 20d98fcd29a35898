/**
 * Python's time formatting for `strftime` (glibc's `strftime` directives, as `time.strftime` uses
 * them) and `to_datetime` (`datetime.strptime`), with naive `datetime`/`timedelta` values.
 *
 * A {@link PyDatetime} is what `to_datetime` returns: ansible-core returns a `datetime.datetime`,
 * whose attributes (`.year`, `.day`, …), subtraction (a {@link PyTimedelta} with `.days`,
 * `.seconds`, `.total_seconds()`) and `str()` (`2020-01-01 10:20:30`) the evaluator may expose.
 */
import { ExprError, mkFloat, PyObject } from '../values.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The broken-down time `strftime` formats (`struct tm`). */
export interface Tm {
  readonly year: number;
  /** 1..12 */
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;
  /** 0 = Sunday */
  readonly weekday: number;
  /** Offset east of UTC in minutes (for `%z`), and the zone name (`%Z`). */
  readonly offset: number;
  readonly zone: string;
  /** Seconds since the epoch (for `%s`). */
  readonly epoch: number;
  /** A naive datetime's fields: `%z` and `%Z` print nothing, as Python's `datetime.strftime`. */
  readonly naive?: boolean;
}

/** A UTC or local `struct tm` for an epoch in seconds (`time.gmtime`/`time.localtime`). */
export function tmOf(epochSeconds: number, utc: boolean): Tm {
  const d = new Date(Math.floor(epochSeconds) * 1000);
  if (Number.isNaN(d.getTime())) throw new ExprError('timestamp out of range for platform time_t');
  if (utc) {
    return {
      year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(), microsecond: 0, weekday: d.getUTCDay(), offset: 0, zone: 'GMT', epoch: Math.floor(epochSeconds),
    };
  }
  const offset = -d.getTimezoneOffset();
  const zone = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? '';
  return {
    year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), hour: d.getHours(), minute: d.getMinutes(), second: d.getSeconds(),
    microsecond: 0, weekday: d.getDay(), offset, zone: zone === 'GMT' && offset === 0 ? 'UTC' : zone, epoch: Math.floor(epochSeconds),
  };
}

function dayOfYear(t: Pick<Tm, 'year' | 'month' | 'day'>): number {
  return Math.round((Date.UTC(t.year, t.month - 1, t.day) - Date.UTC(t.year, 0, 1)) / 86400000) + 1;
}

/** ISO 8601 week-based year and week number. */
function isoWeek(t: Tm): [number, number] {
  const wd = (t.weekday + 6) % 7; // Monday = 0
  const thursday = new Date(Date.UTC(t.year, t.month - 1, t.day - wd + 3));
  const year = thursday.getUTCFullYear();
  const week = Math.floor((Math.round((thursday.getTime() - Date.UTC(year, 0, 1)) / 86400000)) / 7) + 1;
  return [year, week];
}

const pad = (n: number, w = 2, c = '0'): string => String(n).padStart(w, c);

/** glibc's `strftime(format, tm)`. */
export function strftime(format: string, t: Tm): string {
  return format.replace(/%([-_0^#]?)([a-zA-Z%+])/g, (whole, flag: string, c: string) => {
    const h12 = t.hour % 12 === 0 ? 12 : t.hour % 12;
    const yday = dayOfYear(t);
    let out: string;
    switch (c) {
      case 'a': out = (DAYS[t.weekday] ?? '').slice(0, 3); break;
      case 'A': out = DAYS[t.weekday] ?? ''; break;
      case 'b': case 'h': out = (MONTHS[t.month - 1] ?? '').slice(0, 3); break;
      case 'B': out = MONTHS[t.month - 1] ?? ''; break;
      case 'c': out = strftime('%a %b %e %H:%M:%S %Y', t); break;
      case 'C': out = pad(Math.floor(t.year / 100)); break;
      case 'd': out = pad(t.day); break;
      case 'D': case 'x': out = strftime('%m/%d/%y', t); break;
      case 'e': out = pad(t.day, 2, ' '); break;
      case 'F': out = strftime('%Y-%m-%d', t); break;
      case 'g': out = pad(isoWeek(t)[0] % 100); break;
      case 'G': out = String(isoWeek(t)[0]); break;
      case 'H': out = pad(t.hour); break;
      case 'I': out = pad(h12); break;
      case 'j': out = pad(yday, 3); break;
      case 'k': out = pad(t.hour, 2, ' '); break;
      case 'l': out = pad(h12, 2, ' '); break;
      case 'm': out = pad(t.month); break;
      case 'M': out = pad(t.minute); break;
      case 'n': out = '\n'; break;
      case 'p': out = t.hour < 12 ? 'AM' : 'PM'; break;
      case 'P': out = t.hour < 12 ? 'am' : 'pm'; break;
      case 'r': out = strftime('%I:%M:%S %p', t); break;
      case 'R': out = strftime('%H:%M', t); break;
      case 's': out = String(t.epoch); break;
      case 'S': out = pad(t.second); break;
      case 't': out = '\t'; break;
      case 'T': case 'X': out = strftime('%H:%M:%S', t); break;
      case 'u': out = String(t.weekday === 0 ? 7 : t.weekday); break;
      case 'U': out = pad(Math.floor((yday + 6 - t.weekday) / 7)); break;
      case 'V': out = pad(isoWeek(t)[1]); break;
      case 'w': out = String(t.weekday); break;
      case 'W': out = pad(Math.floor((yday + 6 - ((t.weekday + 6) % 7)) / 7)); break;
      case 'y': out = pad(t.year % 100); break;
      case 'Y': out = String(t.year); break;
      case 'z': {
        if (t.naive) {
          out = '';
          break;
        }
        const o = Math.abs(t.offset);
        out = `${t.offset < 0 ? '-' : '+'}${pad(Math.floor(o / 60))}${pad(o % 60)}`;
        break;
      }
      case 'Z': out = t.zone; break;
      case '%': out = '%'; break;
      case 'f': out = pad(t.microsecond, 6); break;
      default: return whole;
    }
    if (flag === '-') return out.replace(/^[0 ]+(?=.)/, '');
    if (flag === '^') return out.toUpperCase();
    return out;
  });
}

/** A naive `datetime.datetime`. */
export class PyDatetime extends PyObject {
  readonly pyType = 'datetime';
  constructor(
    readonly year: number,
    readonly month: number,
    readonly day: number,
    readonly hour = 0,
    readonly minute = 0,
    readonly second = 0,
    readonly microsecond = 0,
  ) {
    super();
  }

  str(): string {
    return this.toString();
  }

  /** ISO 8601 (`datetime.isoformat()`), also the value a datetime leaves the engine as. */
  isoformat(sep = 'T'): string {
    return this.toString().replace(' ', sep);
  }

  plain(): unknown {
    return this.isoformat();
  }

  attr(name: string): unknown {
    switch (name) {
      case 'year':
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second':
      case 'microsecond':
        return this[name];
      case 'isoformat':
        return (args: unknown[]) => this.isoformat(typeof args[0] === 'string' ? args[0] : 'T');
      case 'strftime':
        return (args: unknown[]) => {
          if (typeof args[0] !== 'string') throw new ExprError('strftime() argument 1 must be str');
          return strftime(args[0], { ...tmOf(Math.floor(this.micros / 1e6), true), microsecond: this.microsecond, zone: '', naive: true });
        };
      case 'weekday':
        return () => (new Date(Date.UTC(this.year, this.month - 1, this.day)).getUTCDay() + 6) % 7;
      case 'isoweekday':
        return () => ((new Date(Date.UTC(this.year, this.month - 1, this.day)).getUTCDay() + 6) % 7) + 1;
      case 'timestamp':
        return () => mkFloat(this.micros / 1e6);
      default:
        return undefined;
    }
  }

  override compare(other: unknown): number | undefined {
    return other instanceof PyDatetime ? Math.sign(this.micros - other.micros) : undefined;
  }

  override arith(op: string, other: unknown): unknown {
    if (op === '-' && other instanceof PyDatetime) return this.minus(other);
    return undefined;
  }

  /** Microseconds since 1970-01-01 00:00 (naive). */
  get micros(): number {
    return Date.UTC(this.year, this.month - 1, this.day, this.hour, this.minute, this.second) * 1000 + this.microsecond;
  }

  /** Python's `str(datetime)`. */
  override toString(): string {
    const base = `${pad(this.year, 4)}-${pad(this.month)}-${pad(this.day)} ${pad(this.hour)}:${pad(this.minute)}:${pad(this.second)}`;
    return this.microsecond ? `${base}.${pad(this.microsecond, 6)}` : base;
  }

  /** `a - b`. */
  minus(other: PyDatetime): PyTimedelta {
    return PyTimedelta.ofMicros(this.micros - other.micros);
  }
}

/** A `datetime.timedelta`: `days`, `seconds` (0..86399), `microseconds`. */
export class PyTimedelta extends PyObject {
  readonly pyType = 'timedelta';
  constructor(
    readonly days: number,
    readonly seconds: number,
    readonly microseconds: number,
  ) {
    super();
  }

  str(): string {
    return this.toString();
  }

  plain(): unknown {
    return this.totalSeconds();
  }

  attr(name: string): unknown {
    if (name === 'days' || name === 'seconds' || name === 'microseconds') return this[name];
    if (name === 'total_seconds') return () => mkFloat(this.totalSeconds());
    return undefined;
  }

  override compare(other: unknown): number | undefined {
    return other instanceof PyTimedelta ? Math.sign(this.totalSeconds() - other.totalSeconds()) : undefined;
  }

  static ofMicros(us: number): PyTimedelta {
    const days = Math.floor(us / 86400e6);
    const rest = us - days * 86400e6;
    return new PyTimedelta(days, Math.floor(rest / 1e6), rest % 1e6);
  }

  /** `total_seconds()`. */
  totalSeconds(): number {
    return this.days * 86400 + this.seconds + this.microseconds / 1e6;
  }

  /** Python's `str(timedelta)`: `1 day, 2:03:04`. */
  override toString(): string {
    const h = Math.floor(this.seconds / 3600);
    const m = Math.floor((this.seconds % 3600) / 60);
    const s = this.seconds % 60;
    const time = `${h}:${pad(m)}:${pad(s)}${this.microseconds ? `.${pad(this.microseconds, 6)}` : ''}`;
    return this.days ? `${this.days} day${Math.abs(this.days) === 1 ? '' : 's'}, ${time}` : time;
  }
}

const MONTH_ABBR = MONTHS.map((m) => m.slice(0, 3).toLowerCase());

/** `datetime.strptime(text, format)` for the common directives. */
export function strptime(textIn: string, format: string): PyDatetime {
  let year = 1900;
  let month = 1;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let micro = 0;
  let pm: boolean | null = null;
  let re = '';
  const fields: string[] = [];
  for (let i = 0; i < format.length; i++) {
    const ch = format[i] ?? '';
    if (ch !== '%') {
      re += /\s/.test(ch) ? '\\s+' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      continue;
    }
    const d = format[++i] ?? '';
    const grp: Record<string, string> = {
      Y: '(\\d{4})', m: '(1[0-2]|0[1-9]|[1-9])', d: '(3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])', H: '(2[0-3]|[0-1]\\d|\\d)', I: '(1[0-2]|0[1-9]|[1-9])',
      M: '([0-5]\\d|\\d)', S: '(6[0-1]|[0-5]\\d|\\d)', f: '(\\d{1,6})', y: '(\\d\\d)', p: '(am|pm)', b: '([a-z]{3})', B: '([a-z]+)', h: '([a-z]{3})',
      a: '([a-z]{3})', A: '([a-z]+)', j: '(36[0-6]|3[0-5]\\d|[12]\\d\\d|0[1-9]\\d|00[1-9]|[1-9]\\d|0[1-9]|[1-9])', z: '([+-]\\d\\d:?[0-5]\\d(?::?[0-5]\\d)?|Z)', Z: '([a-z]+)', '%': '(%)',
    };
    const g = grp[d];
    if (g === undefined) throw new ExprError(`'${d}' is a bad directive in format '%${d}'`);
    re += g;
    fields.push(d);
  }
  const m = new RegExp(`^${re}$`, 'i').exec(textIn);
  if (!m) {
    const partial = new RegExp(`^${re}`, 'i').exec(textIn);
    if (partial) throw new ExprError(`unconverted data remains: ${textIn.slice(partial[0].length)}`);
    throw new ExprError(`time data '${textIn}' does not match format '${format}'`);
  }
  fields.forEach((f, i) => {
    const v = (m[i + 1] ?? '').trim();
    if (f === 'Y') year = Number(v);
    else if (f === 'y') year = Number(v) + (Number(v) < 69 ? 2000 : 1900);
    else if (f === 'm') month = Number(v);
    else if (f === 'd') day = Number(v);
    else if (f === 'H' || f === 'I') hour = Number(v);
    else if (f === 'M') minute = Number(v);
    else if (f === 'S') second = Number(v);
    else if (f === 'f') micro = Number(v.padEnd(6, '0'));
    else if (f === 'p') pm = v.toLowerCase() === 'pm';
    else if (f === 'b' || f === 'h' || f === 'B') month = MONTH_ABBR.indexOf(v.slice(0, 3).toLowerCase()) + 1;
  });
  if (fields.includes('I') && pm !== null) hour = (hour % 12) + (pm ? 12 : 0);
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCDate() !== day || month < 1) throw new ExprError('day is out of range for month');
  return new PyDatetime(year, month, day, hour, minute, second, micro);
}
