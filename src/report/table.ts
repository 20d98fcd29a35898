/** Plain-text tables for command output (`kplay drift`, `kplay history`). */

/** Rows as lines: columns padded to their widest cell, two spaces apart, no trailing blanks. */
export function tableLines(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}
