export type Row = string[];

/** Prints left-aligned text columns, right-aligned figures. */
export function printTable(header: Row, rows: Row[]): void {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const numeric = header.map((_, c) => c > 0 && rows.every((r) => /^[\d.\s/-]*$/.test(r[c] ?? '')));
  const line = (row: Row) =>
    `  ${row
      .map((cell, c) => (numeric[c] ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd()}`;
  console.log(line(header));
  console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
}
