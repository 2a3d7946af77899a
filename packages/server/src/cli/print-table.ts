/** Plain-text tables for the commands' human output. */

/** Columns padded to their widest cell, two spaces apart. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    process.stdout.write(
      `${row
        .map((cell, i) => String(cell).padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}
