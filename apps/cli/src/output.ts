/** Where commands write their normal output (stdout in the binary, a buffer in tests). */
export interface CliOutput {
  write(text: string): void;
}

/** Left-aligned columns separated by two spaces, with a header row. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
