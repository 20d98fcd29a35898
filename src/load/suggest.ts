/** "Did you mean …?" suggestions for misspelt names. */

/** Optimal-string-alignment edit distance (Levenshtein plus adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  // a flat (m+1)×(n+1) table; at(i, j) reads cell [i][j]
  const d = new Array<number>((m + 1) * (n + 1)).fill(0);
  const at = (i: number, j: number): number => d[i * (n + 1) + j] ?? 0;
  for (let i = 0; i <= m; i++) d[i * (n + 1)] = i;
  for (let j = 0; j <= n; j++) d[j] = j;
  for (let i = 1; i <= m; i++) {
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * (n + 1) + j] = v;
    }
  }
  return at(m, n);
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
