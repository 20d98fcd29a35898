/**
 * Ansible's host entries in an inventory: an optional `:port` suffix and `[x:y]` / `[x:y:step]`
 * ranges (numeric, zero-padded, or alphabetic), as ansible-core's `_expand_hostpattern` and
 * `expand_hostname_range` do (`db[01:03].example.com` → `db01…db03.example.com`).
 */

/** A host entry expanded: the host names and the port the entry gave (`ansible_port`), if any. */
export interface ExpandedHosts {
  names: string[];
  port?: number;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Expand the first `[…]` range of `line`, recursively. Throws `Error` with Ansible's wording. */
function expandRange(line: string): string[] {
  const open = line.indexOf('[');
  const close = line.indexOf(']', open + 1);
  if (open < 0) return [line];
  if (close < 0) throw new Error(`'${line}': a host range needs a closing ']'`);
  const head = line.slice(0, open);
  const tail = line.slice(close + 1);
  const bounds = line.slice(open + 1, close).split(':');
  if (bounds.length !== 2 && bounds.length !== 3) throw new Error(`'${line}': host range must be begin:end or begin:end:step`);
  const beg = bounds[0] === '' ? '0' : (bounds[0] as string);
  const end = bounds[1] as string;
  const stepText = bounds[2] ?? '1';
  if (end === '') throw new Error(`'${line}': host range must specify end value`);
  if (!/^\d+$/.test(stepText) || Number(stepText) < 1) throw new Error(`'${line}': the step of a host range must be a positive number`);
  const step = Number(stepText);
  let width = 0;
  if (beg.startsWith('0') && beg.length > 1) {
    if (beg.length !== end.length) throw new Error(`'${line}': host range must specify equal-length begin and end formats`);
    width = beg.length;
  }
  const items: string[] = [];
  const ib = beg.length === 1 ? LETTERS.indexOf(beg) : -1;
  const ie = end.length === 1 ? LETTERS.indexOf(end) : -1;
  if (ib >= 0 && ie >= 0) {
    if (ib > ie) throw new Error(`'${line}': host range must have begin <= end`);
    for (let i = ib; i <= ie; i += step) items.push(LETTERS[i] as string);
  } else {
    if (!/^\d+$/.test(beg) || !/^\d+$/.test(end)) throw new Error(`'${line}': host range bounds must be numbers or single letters`);
    const from = Number(beg);
    const to = Number(end);
    if (to - from > 100_000) throw new Error(`'${line}': host range is too large (more than 100000 hosts)`);
    for (let i = from; i <= to; i += step) items.push(String(i).padStart(width, '0'));
  }
  return items.flatMap((it) => expandRange(`${head}${it}${tail}`));
}

/**
 * Expand one host entry of an Ansible inventory: `name`, `name:port`, `[v6addr]:port`, with ranges.
 * Throws `Error` (the caller positions it) on a malformed range.
 */
export function expandHostEntry(entry: string): ExpandedHosts {
  let host = entry;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(entry);
  const plain = /^([^:[\]]+(?:\[[^\]]*\][^:[\]]*)*):(\d+)$/.exec(entry);
  const m = bracketed ?? plain;
  if (m) {
    host = m[1] as string;
    port = Number(m[2]);
  }
  const names = host.includes('[') ? expandRange(host) : [host];
  return port === undefined ? { names } : { names, port };
}
