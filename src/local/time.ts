/**
 * Python's renderings that Ansible's results carry: `str(datetime.now())` timestamps, `str(timedelta)`
 * durations (`start`/`end`/`delta` of `command`) and `str.splitlines()` (`stdout_lines`).
 */

/** A moment with microseconds and its `str(datetime.now())` text (local time). */
export interface PyTime {
  /** Microseconds since the epoch. */
  us: number;
  /** `2026-11-26 12:29:46.981060` */
  text: string;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** Now, as Python's `datetime.now()` prints it. */
export function pyNow(): PyTime {
  const us = Math.round((performance.timeOrigin + performance.now()) * 1000);
  const d = new Date(Math.floor(us / 1000));
  const text = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(us % 1_000_000, 6)}`;
  return { us, text };
}

/** `str(end - start)` of two moments: `0:00:00.003748` (`1 day, 2:03:04.000005` past a day). */
export function delta(start: PyTime, end: PyTime): string {
  let us = Math.max(0, end.us - start.us);
  const days = Math.floor(us / 86_400_000_000);
  us -= days * 86_400_000_000;
  const secs = Math.floor(us / 1_000_000);
  const frac = us % 1_000_000;
  const hms = `${Math.floor(secs / 3600)}:${pad(Math.floor(secs / 60) % 60)}:${pad(secs % 60)}${frac ? `.${pad(frac, 6)}` : ''}`;
  return days ? `${days} day${days > 1 ? 's' : ''}, ${hms}` : hms;
}

/** Every line boundary of Python's `str.splitlines()` (\r\n, \n, \r, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029). */
// eslint-disable-next-line no-control-regex -- Python counts the file/group/record separators as line breaks
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Python's `str.splitlines()`: split on every line boundary Python knows, no trailing empty line. */
export function splitLines(s: string): string[] {
  if (s === '') return [];
  const parts = s.split(LINE_BREAK);
  if (new RegExp(`(?:${LINE_BREAK.source})$`).test(s)) parts.pop();
  return parts;
}
