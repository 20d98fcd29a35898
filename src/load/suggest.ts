/** "Did you mean …?" suggestions for misspelt names. */

/** Optimal-string-alignment edit distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  const d: number[][] = Array.from({ length: m + 1 }, (_, i) => Array.from({ length: n + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[m][n];
}

/**
 * The candidates closest to `term` (case-insensitive), if close enough to be a plausible typo:
 * at most max(1, min(3, ⌊length/3⌋)) edits. Returns [] when nothing is close.
 */
export function closest(term: string, candidates: Iterable<string>): string[] {
  const limit = Math.max(1, Math.min(3, Math.floor(term.length / 3)));
  let best = Infinity;
  let out: string[] = [];
  const lower = term.toLowerCase();
  for (const c of new Set(candidates)) {
    const dist = editDistance(lower, c.toLowerCase());
    if (dist > limit || dist > best) continue;
    if (dist < best) {
      best = dist;
      out = [];
    }
    out.push(c);
  }
  return out;
}

/** `did you mean 'x'?` (or `'x' or 'y'`), or undefined when nothing is close. */
export function didYouMean(term: string, candidates: Iterable<string>): string | undefined {
  const near = closest(term, candidates).slice(0, 3);
  if (near.length === 0) return undefined;
  return `did you mean ${near.map((s) => `'${s}'`).join(' or ')}?`;
}

/** `a, b, c` — or the first `max` items and `… (N more)`. */
export function listSome(items: readonly string[], max = 20): string {
  if (items.length === 0) return '(none)';
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')}, … (${items.length - max} more)`;
}
