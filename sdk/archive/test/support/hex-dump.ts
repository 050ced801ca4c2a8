/**
 * Renders bytes as the docs' test-vector dump: 32 bytes per line as "offset: hex", with runs of all-zero lines
 * folded into one "*" line (like `hexdump`), and the total size on the last line.
 */
export function renderHexDump(bytes: Buffer): string {
  const lines: string[] = [];
  let isFolding = false;
  for (let offset = 0; offset < bytes.length; offset += 32) {
    const row = bytes.subarray(offset, offset + 32);
    if (row.every((byte) => byte === 0) && offset > 0) {
      if (!isFolding) lines.push('*');
      isFolding = true;
      continue;
    }
    isFolding = false;
    lines.push(`${offset.toString(16).padStart(8, '0')}: ${row.toString('hex')}`);
  }
  lines.push(`${bytes.length.toString(16).padStart(8, '0')}`);
  return lines.join('\n');
}

/** Parses {@link renderHexDump} output back into bytes (folded lines are zeros). */
export function parseHexDump(text: string): Buffer {
  const lines = text.trim().split('\n');
  const total = Number.parseInt(lines.at(-1) ?? '', 16);
  const bytes = Buffer.alloc(total);
  for (const line of lines.slice(0, -1)) {
    if (line === '*') continue;
    const [offset, hex] = line.split(': ');
    Buffer.from(hex ?? '', 'hex').copy(bytes, Number.parseInt(offset ?? '', 16));
  }
  return bytes;
}
