/**
 * Host patterns (`hosts:` of a play, `--limit`), as ansible-core's InventoryManager reads them:
 *
 * - terms are split where ansible-core splits them (src/inventory/split-pattern.ts): on commas when
 *   there is one, else on `:` and white space unless the whole pattern is one address (`fe80::1`,
 *   `host:22`); a YAML list's items are split alike; empty terms are dropped;
 * - a term is a cluster name, a group name, `all`, a glob (`*`, `?`, `[abc]`, `[!abc]`: Python's
 *   fnmatch, src/core/fnmatch.ts) or `~regex`, matched against group names (a matching group
 *   contributes its members) and, when no group matched or the term is a glob/regex/holds a dot,
 *   against cluster names; a subscript (`g[0]`, `g[-1]`, `g[1:3]`, `g[2:]`) picks from the matches;
 *   `&term` intersects, `!term` excludes;
 * - evaluation: the plain terms in the order written (or `all` when there are none), then each
 *   intersection, then each exclusion; the result is in that order, without duplicates.
 * - Ansible's implicit localhost (InventoryCluster.implicit) is matched only by the exact names
 *   `localhost`, `127.0.0.1` and `::1`: `all`, `*`, globs, groups and an exclusion-only pattern
 *   never select it (as in ansible-core).
 *
 * selectClusters returns the terms that matched nothing (a play warns about each and runs the
 * rest, as ansible-playbook does); matchClusters, for `--limit` and commands, refuses them.
 */
import { fnmatchRegex } from '../core/fnmatch.js';
import { InputError, type SourcePos } from '../load/errors.js';
import { LOCALHOST_NAMES } from './connection.js';
import { splitHostPattern } from './split-pattern.js';
import { groupMembers } from './host-vars.js';
import { didYouMean, listSome } from '../load/suggest.js';
import type { Inventory } from './types.js';
import { useHostPatterns } from '../template/lookups.js';

/** One parsed term of a host pattern. */
export interface PatternTerm {
  /** `union` (plain), `intersect` (`&`), or `exclude` (`!`). */
  op: 'union' | 'intersect' | 'exclude';
  /** The name, glob or `~regex`, without its operator (and without a subscript). */
  text: string;
  /**
   * Ansible's subscript (`webservers[0]`, `webservers[-1]`, `webservers[0:2]`, `webservers[1:]`):
   * `[index]` or `[start, end]` (inclusive; end -1 = the last), applied to the term's matches.
   */
  subscript?: [number, number | undefined];
  /** The term as written, operator and subscript included (for messages). */
  raw: string;
}

/**
 * `name[3]`, `name[-1]`, `name[0:2]`, `name[1:]` — ansible-core's PATTERN_WITH_SUBSCRIPT, which
 * still reads the removed `[x-y]` form as `[x:y]` (with a warning there; the same range here).
 */
const SUBSCRIPT_RE = /^(.+)\[(?:(-?[0-9]+)|([0-9]+)[:-]([0-9]*))\]\n?$/su;

/** The clusters of the inventory that patterns like `all` see (everything but the implicit localhost). */
function explicitClusters(inv: Inventory): string[] {
  return [...inv.clusters.values()].filter((c) => !c.implicit).map((c) => c.name);
}

/** Human-readable form of a pattern for messages. */
export function showPattern(pattern: string | readonly string[]): string {
  return typeof pattern === 'string' ? pattern : `[${pattern.join(', ')}]`;
}

/** One term as ansible-core's `_match_one_pattern` reads it: operator, subscript (not of a `~regex`). */
function parseTerm(piece: string, shown: string, where: SourcePos | undefined): PatternTerm {
  const op = piece.startsWith('&') ? 'intersect' : piece.startsWith('!') ? 'exclude' : 'union';
  const text = op === 'union' ? piece : piece.slice(1);
  if (text === '') {
    throw new InputError(`host pattern '${shown}': '${piece}' must be followed by a cluster or group name`, where, `e.g. 'prod:${piece}eu'`);
  }
  const sub = text.startsWith('~') ? null : SUBSCRIPT_RE.exec(text);
  if (!sub) return { op, text, raw: piece };
  const [, base = '', idx, start, end] = sub;
  return { op, text: base, raw: piece, subscript: idx !== undefined ? [Number(idx), undefined] : [Number(start), end ? Number(end) : -1] };
}

/**
 * Split a host pattern into terms, exactly where ansible-core splits it (src/inventory/split-pattern.ts):
 * `c1:c2:c4` is three names, `fe80::1` one address, `a,b:c` the terms `a` and `b:c`; white space
 * separates too, and empty terms are dropped. Throws an InputError for an empty pattern (Ansible:
 * "Hosts list cannot be empty"), a non-string list item, and an operator with nothing after it.
 */
export function parsePattern(pattern: string | readonly string[], where?: SourcePos): PatternTerm[] {
  const shown = showPattern(pattern);
  const parts: unknown[] = typeof pattern === 'string' ? [pattern] : Array.isArray(pattern) ? [...pattern] : [pattern];
  if (parts.length === 0) throw new InputError('empty host pattern', where, "use 'all' for every cluster");
  const terms: PatternTerm[] = [];
  for (const part of parts) {
    if (typeof part !== 'string') throw new InputError(`host pattern ${shown}: every item must be a string, got ${JSON.stringify(part)}`, where);
    if (part.trim() === '') throw new InputError(`empty host pattern${typeof pattern === 'string' ? '' : ` item in ${shown}`}`, where, "use 'all' for every cluster");
    for (const piece of splitHostPattern(part)) terms.push(parseTerm(piece, shown, where));
  }
  return terms;
}

/** The members a subscript selects (Python indexing); a single index out of range is an error, as in Ansible. */
function applySubscript(members: string[], term: PatternTerm, where: SourcePos | undefined): string[] {
  const sub = term.subscript;
  if (!sub || members.length === 0) return members;
  const [start, end] = sub;
  const at = (i: number): number => (i < 0 ? members.length + i : i);
  if (end === undefined || end === 0) {
    const m = members[at(start)];
    if (m === undefined) throw new InputError(`No hosts matched the subscripted pattern '${term.text}[${start}]'`, where, `'${term.text}' has ${members.length} member(s): index 0 to ${members.length - 1}, or -1 for the last`);
    return [m];
  }
  const last = end === -1 ? members.length - 1 : end;
  return members.slice(Math.max(0, at(start)), last + 1);
}

/** The RegExp of a term: `~regex` (Python's `re.match`: anchored at the start) or an fnmatch glob. */
function termRegex(text: string, where: SourcePos | undefined): RegExp {
  if (!text.startsWith('~')) return fnmatchRegex(text);
  try {
    return new RegExp(`^(?:${text.slice(1).replace(/\(\?P</g, '(?<').replace(/\(\?P=(\w+)\)/g, '\\k<$1>')})`, 'u');
  } catch {
    throw new InputError(`Invalid host list pattern: ${text}`, where, 'after ~ comes a regular expression matched against cluster and group names');
  }
}

/**
 * What one term (without operator and subscript) matches, as ansible-core's `_enumerate_matches`:
 * the members of every group it matches; names of clusters too when no group matched or the term is
 * a glob, a `~regex` or holds a dot; else Ansible's implicit localhost for `localhost`/`127.0.0.1`/`::1`.
 * `known` is false when nothing matched (Ansible warns "Could not match supplied host pattern").
 */
function enumerateMatches(inv: Inventory, text: string, where: SourcePos | undefined): { known: boolean; members: string[] } {
  const re = termRegex(text, where);
  const members: string[] = [];
  const groups = [...inv.groups.keys()].filter((g) => re.test(g));
  for (const g of groups) members.push(...groupMembers(inv, g));
  if (groups.length === 0 || text.startsWith('~') || /[.?*[]/.test(text)) members.push(...explicitClusters(inv).filter((c) => re.test(c)));
  if (members.length === 0 && LOCALHOST_NAMES.includes(text)) {
    const local = inv.clusters.has('localhost') ? 'localhost' : inv.clusters.has(text) ? text : undefined;
    if (local) return { known: true, members: [local] };
  }
  return { known: members.length > 0 || groups.length > 0 || text === 'all', members };
}

function knownNames(inv: Inventory): string {
  const names = explicitClusters(inv);
  const none = names.length < inv.clusters.size ? "(none; the implicit localhost is matched only by 'localhost', not by 'all')" : '(none)';
  return `known groups: ${listSome([...inv.groups.keys()])}; known clusters: ${names.length ? listSome(names) : none}`;
}

/** What a host pattern selects, and the terms that matched nothing (each one warned about by Ansible). */
export interface Selection {
  /** The clusters, in ansible-core's order: as the terms name them, each once. */
  clusters: string[];
  /** Terms that matched no cluster or group, `!` ones included (ansible-core warns of each: "Could not match supplied host pattern, ignoring: …"). */
  unmatched: PatternTerm[];
}

/** A term without its operator: what ansible-core caches a term's matches under. */
function termKey(t: PatternTerm): string {
  return t.op === 'union' ? t.raw : t.raw.slice(1);
}

/**
 * The clusters a host pattern selects, as ansible-core's `InventoryManager.get_hosts` evaluates it:
 * the plain terms in the order written (each adding the clusters not yet selected; none written means
 * `all`), then every `&` term, then every `!` term. A term naming a cluster selects it even when a
 * group has the same name. Terms that match nothing are returned in `unmatched`, not thrown.
 */
export function selectClusters(inv: Inventory, pattern: string | readonly string[], where?: SourcePos): Selection {
  const terms = parsePattern(pattern, where);
  const rank = { union: 0, intersect: 1, exclude: 2 } as const;
  const ordered = [...terms].sort((a, b) => rank[a.op] - rank[b.op]);
  if (!ordered.some((t) => t.op === 'union')) ordered.unshift({ op: 'union', text: 'all', raw: 'all' });
  const unmatched: PatternTerm[] = [];
  let selected: string[] = [];
  for (const t of ordered) {
    const plainCluster = t.op === 'union' && !t.subscript && inv.clusters.has(t.text) && !inv.clusters.get(t.text)?.implicit;
    let members: string[];
    if (plainCluster) members = [t.text];
    else {
      const found = enumerateMatches(inv, t.text, where);
      // ansible-core warns once per term (its pattern cache), whatever the operator
      if (!found.known && !unmatched.some((u) => termKey(u) === termKey(t))) unmatched.push(t);
      members = applySubscript(found.members, t, where);
    }
    if (t.op === 'union') {
      const have = new Set(selected);
      for (const m of members) {
        if (have.has(m)) continue;
        have.add(m);
        selected.push(m);
      }
    } else {
      const these = new Set(members);
      selected = selected.filter((c) => (t.op === 'intersect' ? these.has(c) : !these.has(c)));
    }
  }
  return { clusters: selected, unmatched };
}

/**
 * The clusters a host pattern selects (selectClusters), strictly: a plain or `&` term that matches
 * nothing is an InputError with a "did you mean" (kplay's `--limit` and commands naming clusters
 * refuse a typo rather than warn as ansible-core does), and so is an empty result.
 * `where` positions errors (e.g. at the play's `hosts:` key).
 */
export function matchClusters(inv: Inventory, pattern: string | readonly string[], where?: SourcePos): string[] {
  const shown = showPattern(pattern);
  const { clusters, unmatched } = selectClusters(inv, pattern, where);
  const bad = unmatched.find((t) => t.op !== 'exclude');
  if (bad) {
    const glob = /[*?[~]/.test(bad.text);
    const what = glob ? `'${bad.text}' matches no cluster or group name` : `no cluster or group named '${bad.text}'`;
    const hint = glob ? undefined : didYouMean(bad.text, [...inv.groups.keys(), ...explicitClusters(inv)]);
    throw new InputError(`host pattern '${shown}': ${what}`, where, hint ?? knownNames(inv));
  }
  if (clusters.length === 0) throw new InputError(`host pattern '${shown}' matches no clusters`, where, knownNames(inv));
  return clusters;
}

/** Check every play's host pattern and the limit before anything runs (a bad pattern is an InputError). */
export function checkPatterns(inv: Inventory, hosts: (string | string[])[], limit: string | undefined): void {
  for (const h of hosts) matchClusters(inv, h);
  if (limit) matchClusters(inv, limit);
}

/**
 * The `inventory_hostnames` lookup's evaluation, as ansible-core's: an inventory made of the
 * `groups` variable alone (each group holding its hosts directly, no children), then the pattern
 * over it; a pattern that matches nothing gives no hosts.
 */
function hostnamesOf(groups: Record<string, string[]>, pattern: string[]): string[] {
  const inv: Inventory = { source: 'groups', dir: '', clusters: new Map(), groups: new Map(), secrets: [] };
  for (const [g, hosts] of Object.entries(groups)) {
    inv.groups.set(g, { name: g, vars: {}, inlineVars: {}, fileVars: {}, playbookVars: {}, priority: 1, children: [], clusters: [...hosts], parents: [], depth: 0 });
    for (const h of hosts) {
      const c = inv.clusters.get(h) ?? { name: h, context: h, vars: {}, groups: [] };
      if (!c.groups.includes(g)) c.groups.push(g);
      inv.clusters.set(h, c);
    }
  }
  try {
    return selectClusters(inv, pattern).clusters;
  } catch {
    return [];
  }
}

useHostPatterns(hostnamesOf);
