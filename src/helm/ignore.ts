/**
 * `.helmignore` exactly as helm (3 and 4, `pkg/ignore`) reads and applies it, so that kplay reads
 * the same files of a chart directory as helm loads:
 *
 * - one pattern per line; blank lines and lines starting with `#` are skipped; leading and
 *   trailing spaces are trimmed (no escape for them, no inline comments);
 * - globs are Go's `filepath.Match`: `*` and `?` never match `/`, `[a-z]`, `[^a-z]`, `\` escapes;
 *   `**` is refused (helm fails to load the chart), as is a malformed pattern;
 * - `/pattern` matches the path from the chart root; a pattern with a `/` inside matches the whole
 *   path; a pattern without `/` matches the base name, at any depth;
 * - `pattern/` matches directories only (a matched directory is skipped with all it holds);
 * - rules are tried in order and the first that decides wins. A negated rule `!pattern` decides
 *   for every path it does NOT match (ignored) and lets a path it matches go on to the next
 *   rules: `!Chart.yaml` alone ignores every other file, as in helm (unlike `.gitignore`);
 * - helm adds one rule after the file's: `templates/.?*` (dotfiles directly in `templates/`).
 */

/** A `.helmignore` line helm refuses: the chart cannot be loaded. */
export class HelmIgnoreError extends Error {}

/** One parsed rule. */
export interface IgnoreRule {
  /** The line as written (trimmed). */
  raw: string;
  negate: boolean;
  /** Matches directories only (written with a trailing `/`). */
  mustDir: boolean;
  /** `rooted` (leading `/`) and `path` (a `/` inside) match the whole path; `base` the base name. */
  scope: 'rooted' | 'path' | 'base';
  /** The glob, without `!`, leading `/` and trailing `/`. */
  glob: string;
}

/** A pattern Go's `filepath.Match` rejects (`ErrBadPattern`). */
class BadPattern extends Error {}

/** `[lo, rest]` of one possibly escaped character of a character class (Go's `getEsc`). */
function getEsc(chunk: string[]): [string, string[]] {
  if (chunk.length === 0 || chunk[0] === '-' || chunk[0] === ']') throw new BadPattern();
  let c = chunk;
  if (c[0] === '\\') {
    c = c.slice(1);
    if (c.length === 0) throw new BadPattern();
  }
  const r = c[0] as string;
  const rest = c.slice(1);
  if (rest.length === 0) throw new BadPattern();
  return [r, rest];
}

/** Go's `scanChunk`: leading stars, then the chunk up to the next star outside a class. */
function scanChunk(pattern: string[]): { star: boolean; chunk: string[]; rest: string[] } {
  let p = pattern;
  let star = false;
  while (p.length > 0 && p[0] === '*') {
    p = p.slice(1);
    star = true;
  }
  let inRange = false;
  let i = 0;
  scan: for (; i < p.length; i++) {
    switch (p[i]) {
      case '\\':
        if (i + 1 < p.length) i++;
        break;
      case '[':
        inRange = true;
        break;
      case ']':
        inRange = false;
        break;
      case '*':
        if (!inRange) break scan;
        break;
    }
  }
  return { star, chunk: p.slice(0, i), rest: p.slice(i) };
}

/** Go's `matchChunk`: the rest of `s` after `chunk` matched its start, or undefined. */
function matchChunk(chunk: string[], s: string[]): string[] | undefined {
  let c = chunk;
  let t = s;
  let failed = false;
  while (c.length > 0) {
    if (!failed && t.length === 0) failed = true;
    const head = c[0];
    if (head === '[') {
      let r = '';
      if (!failed) {
        r = t[0] as string;
        t = t.slice(1);
      }
      c = c.slice(1);
      let negated = false;
      if (c.length > 0 && c[0] === '^') {
        negated = true;
        c = c.slice(1);
      }
      let match = false;
      let nrange = 0;
      for (;;) {
        if (c.length > 0 && c[0] === ']' && nrange > 0) {
          c = c.slice(1);
          break;
        }
        let lo: string;
        [lo, c] = getEsc(c);
        let hi = lo;
        if (c[0] === '-') [hi, c] = getEsc(c.slice(1));
        const cp = r.codePointAt(0) ?? -1;
        if ((lo.codePointAt(0) ?? 0) <= cp && cp <= (hi.codePointAt(0) ?? 0)) match = true;
        nrange++;
      }
      if (match === negated) failed = true;
    } else if (head === '?') {
      if (!failed) {
        if (t[0] === '/') failed = true;
        t = t.slice(1);
      }
      c = c.slice(1);
    } else {
      if (head === '\\') {
        c = c.slice(1);
        if (c.length === 0) throw new BadPattern();
      }
      if (!failed) {
        if (c[0] !== t[0]) failed = true;
        t = t.slice(1);
      }
      c = c.slice(1);
    }
  }
  return failed ? undefined : t;
}

/**
 * Go's `filepath.Match(pattern, name)` on a `/`-separated system: the whole `name` must match.
 * @throws Error (`syntax error in pattern`) for a malformed pattern, as Go returns `ErrBadPattern`.
 * @example goGlobMatch('*.md', 'README.md') // true
 * @example goGlobMatch('*', 'docs/a') // false: `*` does not match `/`
 */
export function goGlobMatch(pattern: string, name: string): boolean {
  try {
    return match([...pattern], [...name]);
  } catch (e) {
    if (e instanceof BadPattern) throw new Error(`syntax error in pattern ${JSON.stringify(pattern)}`);
    throw e;
  }
}

function match(pattern: string[], name: string[]): boolean {
  let p = pattern;
  let n = name;
  outer: while (p.length > 0) {
    const { star, chunk, rest } = scanChunk(p);
    p = rest;
    if (star && chunk.length === 0) return !n.includes('/');
    const t = matchChunk(chunk, n);
    if (t !== undefined && (t.length === 0 || p.length > 0)) {
      n = t;
      continue;
    }
    if (star) {
      for (let i = 0; i < n.length && n[i] !== '/'; i++) {
        const t2 = matchChunk(chunk, n.slice(i + 1));
        if (t2 !== undefined) {
          if (p.length === 0 && t2.length > 0) continue;
          n = t2;
          continue outer;
        }
      }
    }
    // the rest of the pattern must still be well-formed
    while (p.length > 0) {
      const next = scanChunk(p);
      p = next.rest;
      matchChunk(next.chunk, []);
    }
    return false;
  }
  return n.length === 0;
}

/** Parse one line; `undefined` for blank lines and comments. */
function parseRule(line: string): IgnoreRule | undefined {
  const raw = line.trim();
  if (raw === '' || raw.startsWith('#')) return undefined;
  if (raw.includes('**')) throw new HelmIgnoreError('double-star (**) syntax is not supported');
  goGlobMatch(raw, 'abc'); // refuses what helm refuses
  let glob = raw;
  const negate = glob.startsWith('!');
  if (negate) glob = glob.slice(1);
  const mustDir = glob.endsWith('/');
  if (mustDir) glob = glob.slice(0, -1);
  if (glob.startsWith('/')) return { raw, negate, mustDir, scope: 'rooted', glob: glob.slice(1) };
  return { raw, negate, mustDir, scope: glob.includes('/') ? 'path' : 'base', glob };
}

/** The rule helm always adds after the `.helmignore` ones: dotfiles directly in `templates/`. */
export const DEFAULT_IGNORE_RULES: readonly IgnoreRule[] = [parseRule('templates/.?*') as IgnoreRule];

/**
 * The rules of a `.helmignore` text, followed by helm's default rule.
 * @throws HelmIgnoreError naming the line for a rule helm refuses (`**`, a malformed glob).
 */
export function parseHelmIgnore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  // bufio.ScanLines: split on \n, drop one trailing \r
  text.split('\n').forEach((line, i) => {
    try {
      const r = parseRule(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (r) rules.push(r);
    } catch (e) {
      throw new HelmIgnoreError(`.helmignore line ${i + 1}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
  return [...rules, ...DEFAULT_IGNORE_RULES];
}

function ruleMatches(rule: IgnoreRule, rel: string): boolean {
  const target = rule.scope === 'base' ? rel.slice(rel.lastIndexOf('/') + 1) : rel;
  return goGlobMatch(rule.glob, target);
}

/**
 * Whether helm ignores the chart file or directory at `rel` (relative to the chart root, `/`
 * separated, no leading `./`). The first rule that decides wins (see the module comment).
 */
export function isIgnored(rules: readonly IgnoreRule[], rel: string, isDir: boolean): boolean {
  if (rel === '' || rel === '.' || rel === './') return false;
  for (const r of rules) {
    if (r.negate) {
      if (r.mustDir && !isDir) return true;
      if (!ruleMatches(r, rel)) return true;
      continue;
    }
    if (r.mustDir && !isDir) continue;
    if (ruleMatches(r, rel)) return true;
  }
  return false;
}
