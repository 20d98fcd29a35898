/**
 * Host patterns (`hosts:` of a play, `--limit`), Ansible style:
 *
 * - a term is a cluster name, a group name, `all` (or `*`), or a glob (`*`, `?`, `[abc]`,
 *   `[!abc]`: Python's fnmatch, src/core/fnmatch.ts) matched against cluster and group names (a
 *   matching group contributes its members);
 * - terms are separated by `:` or `,`, or given as a YAML list (whose items may themselves hold
 *   several terms); `&term` intersects, `!term` excludes;
 * - evaluation: the union of the plain terms (or every cluster when there are none), then each
 *   intersection, then each exclusion. The result is in inventory order, without duplicates.
 *
 * - Ansible's implicit localhost (InventoryCluster.implicit) is matched only by the exact names
 *   `localhost` and `127.0.0.1`: `all`, `*`, globs, groups and an exclusion-only pattern
 *   never select it (as in ansible-core).
 *
 * Errors (InputError): an empty or malformed term, a plain or `&` term that matches nothing
 * (with a "did you mean" suggestion), and a pattern whose result is empty. An exclusion that
 * matches nothing is fine.
 */
import { fnmatchRegex } from '../core/fnmatch.js';
import { InputError, type SourcePos } from '../load/errors.js';
import { LOCALHOST_NAMES } from './connection.js';
import { groupMembers } from './host-vars.js';
import { didYouMean, listSome } from '../load/suggest.js';
import type { Inventory } from './types.js';

/** One parsed term of a host pattern. */
export interface PatternTerm {
  /** `union` (plain), `intersect` (`&`), or `exclude` (`!`). */
  op: 'union' | 'intersect' | 'exclude';
  /** The name or glob, without its operator (and without a subscript). */
  text: string;
  /**
   * Ansible's subscript (`webservers[0]`, `webservers[-1]`, `webservers[0:2]`, `webservers[1:]`):
   * `[index]` or `[start, end]` (inclusive; end -1 = the last), applied to the term's matches.
   */
  subscript?: [number, number | undefined];
}

/** `name[3]`, `name[-1]`, `name[0:2]`, `name[1:]` (ansible-core's PATTERN_WITH_SUBSCRIPT; `[x-y]` is gone). */
const SUBSCRIPT_RE = /^(.+)\[(?:(-?[0-9]+)|([0-9]+):([0-9]*))\]$/;

/** An IPv6 address (`::1`, `fe80::1`): one term, its colons are not separators. */
const IPV6_RE = /^[0-9A-Fa-f]*:[0-9A-Fa-f:.]*:[0-9A-Fa-f.]*$/;

/**
 * The terms of one pattern string as ansible-core's `split_host_pattern` finds them: with a comma,
 * split on commas only; an IPv6 address is one term; otherwise split on colons outside `[...]`.
 */
function splitTerms(part: string): string[] {
  if (part.includes(',')) return part.split(',');
  if (IPV6_RE.test(part.trim())) return [part];
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  for (const ch of part) {
    if (ch === '[') depth++;
    else if (ch === ']' && depth > 0) depth--;
    if (ch === ':' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** The members a subscript selects (Python indexing; out of range selects nothing). */
function applySubscript(members: string[], sub: PatternTerm['subscript']): string[] {
  if (!sub) return members;
  const [start, end] = sub;
  const at = (i: number): number => (i < 0 ? members.length + i : i);
  if (end === undefined || end === 0) {
    const m = members[at(start)];
    return m === undefined ? [] : [m];
  }
  const last = end === -1 ? members.length - 1 : end;
  return members.slice(at(start), last + 1);
}

const TERM_RE = /^[A-Za-z0-9_.\-*?[\]!^]+$/;

/** The clusters of the inventory that patterns like `all` see (everything but the implicit localhost). */
function explicitClusters(inv: Inventory): string[] {
  return [...inv.clusters.values()].filter((c) => !c.implicit).map((c) => c.name);
}

/** Human-readable form of a pattern for messages. */
export function showPattern(pattern: string | readonly string[]): string {
  return typeof pattern === 'string' ? pattern : `[${pattern.join(', ')}]`;
}

/** Split a host pattern into terms. Throws an InputError on an empty or malformed term. */
export function parsePattern(pattern: string | readonly string[], where?: SourcePos): PatternTerm[] {
  const shown = showPattern(pattern);
  const parts: unknown[] = typeof pattern === 'string' ? [pattern] : Array.isArray(pattern) ? [...pattern] : [pattern];
  if (parts.length === 0) throw new InputError('empty host pattern', where, "use 'all' for every cluster");
  const terms: PatternTerm[] = [];
  for (const part of parts) {
    if (typeof part !== 'string') throw new InputError(`host pattern ${shown}: every item must be a string, got ${JSON.stringify(part)}`, where);
    if (part.trim() === '') throw new InputError(`empty host pattern${typeof pattern === 'string' ? '' : ` item in ${shown}`}`, where, "use 'all' for every cluster");
    for (const raw of splitTerms(part)) {
      const piece = raw.trim();
      if (piece === '') {
        throw new InputError(`host pattern '${shown}' has an empty term`, where, "remove the doubled, leading or trailing ':' or ','");
      }
      const op = piece.startsWith('&') ? 'intersect' : piece.startsWith('!') ? 'exclude' : 'union';
      const text = op === 'union' ? piece : piece.slice(1).trim();
      if (text === '') {
        throw new InputError(`host pattern '${shown}': '${piece}' must be followed by a cluster or group name`, where, `e.g. 'prod:${piece}eu'`);
      }
      if (text.startsWith('&') || text.startsWith('!')) {
        throw new InputError(`host pattern '${shown}': bad term '${piece}' (one operator per term)`, where, "write '&name' to intersect or '!name' to exclude");
      }
      if (!TERM_RE.test(text) && !IPV6_RE.test(text) && !SUBSCRIPT_RE.test(text)) {
        throw new InputError(
          `host pattern '${shown}': bad term '${piece}'`,
          where,
          'terms are cluster or group names, optionally with globs (*, ?, [abc]), separated by : or , (prefix & to intersect, ! to exclude)',
        );
      }
      const sub = SUBSCRIPT_RE.exec(text);
      if (sub && !IPV6_RE.test(text)) {
        const [, base = '', idx, start, end] = sub;
        terms.push({ op, text: base, subscript: idx !== undefined ? [Number(idx), undefined] : [Number(start), end ? Number(end) : -1] });
      } else terms.push({ op, text });
    }
  }
  return terms;
}

/** True if `text` contains glob characters. */
function isGlob(text: string): boolean {
  return /[*?[]/.test(text);
}

/** The clusters one term matches, and whether the term named anything at all. */
function resolveTerm(inv: Inventory, text: string): { known: boolean; members: string[] } {
  if (text === 'all' || text === '*') return { known: true, members: explicitClusters(inv) };
  if (inv.groups.has(text)) return { known: true, members: groupMembers(inv, text) };
  if (inv.clusters.has(text)) return { known: true, members: [text] };
  // Ansible: `127.0.0.1` (and `localhost`) reach the inventory's localhost, else the implicit one.
  if (LOCALHOST_NAMES.includes(text) && inv.clusters.has('localhost')) return { known: true, members: ['localhost'] };
  if (!isGlob(text)) return { known: false, members: [] };
  const re = fnmatchRegex(text);
  const out = new Set<string>();
  let known = false;
  for (const name of inv.groups.keys()) {
    if (re.test(name)) {
      known = true;
      for (const m of groupMembers(inv, name)) out.add(m);
    }
  }
  for (const name of explicitClusters(inv)) {
    if (re.test(name)) {
      known = true;
      out.add(name);
    }
  }
  return { known, members: [...out] };
}

function knownNames(inv: Inventory): string {
  const names = explicitClusters(inv);
  const none = names.length < inv.clusters.size ? "(none; the implicit localhost is matched only by 'localhost', not by 'all')" : '(none)';
  return `known groups: ${listSome([...inv.groups.keys()])}; known clusters: ${names.length ? listSome(names) : none}`;
}

/**
 * The clusters a host pattern selects, in inventory order (see the module header for the
 * syntax). `where` positions errors (e.g. at the play's `hosts:` key).
 */
export function matchClusters(inv: Inventory, pattern: string | string[], where?: SourcePos): string[] {
  const shown = showPattern(pattern);
  const terms = parsePattern(pattern, where);
  const resolve = (t: PatternTerm): string[] => {
    const { known, members: all } = resolveTerm(inv, t.text);
    const members = applySubscript(all, t.subscript);
    if (!known && t.op !== 'exclude') {
      const what = isGlob(t.text) ? `'${t.text}' matches no cluster or group name` : `no cluster or group named '${t.text}'`;
      const hint = isGlob(t.text) ? undefined : didYouMean(t.text, [...inv.groups.keys(), ...explicitClusters(inv)]);
      throw new InputError(`host pattern '${shown}': ${what}`, where, hint ?? knownNames(inv));
    }
    return members;
  };
  const unions = terms.filter((t) => t.op === 'union');
  const selected = new Set<string>(unions.length === 0 ? explicitClusters(inv) : []);
  for (const t of unions) for (const m of resolve(t)) selected.add(m);
  for (const t of terms.filter((x) => x.op === 'intersect')) {
    const keep = new Set(resolve(t));
    for (const m of [...selected]) if (!keep.has(m)) selected.delete(m);
  }
  for (const t of terms.filter((x) => x.op === 'exclude')) for (const m of resolve(t)) selected.delete(m);
  const result = [...inv.clusters.keys()].filter((c) => selected.has(c));
  if (result.length === 0) throw new InputError(`host pattern '${shown}' matches no clusters`, where, knownNames(inv));
  return result;
}

/** Check every play's host pattern and the limit before anything runs (a bad pattern is an InputError). */
export function checkPatterns(inv: Inventory, hosts: (string | string[])[], limit: string | undefined): void {
  for (const h of hosts) matchClusters(inv, h);
  if (limit) matchClusters(inv, limit);
}
