/** One entry of an `ls` or `allinfo` answer. */
export interface SmbEntry {
  /** Folder key of the entry's folder, relative to the root (`''` or ending in `/`). */
  folderKey: string;
  name: string;
  isDirectory: boolean;
  size: number;
  modifiedAt: Date;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Parses `Tue Nov 24 08:35:49 2026` (smbclient prints UTC: it runs with TZ=UTC). */
export function parseSmbDate(text: string): Date | undefined {
  const match = /(\w{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})/.exec(text);
  if (!match) return undefined;
  const month = MONTHS.indexOf(match[1] ?? '');
  if (month < 0) return undefined;
  return new Date(Date.UTC(Number(match[6]), month, Number(match[2]), Number(match[3]), Number(match[4]), Number(match[5])));
}

// "  name    A   300000  Tue Nov 24 08:35:48 2026": name padded to 30+ columns, attributes, size, date.
const ENTRY = /^ {2}(.+?)\s+([A-Z]*)\s+(\d+)\s+(\w{3} \w{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/**
 * Parses a recursive `ls "<root>/<folder>/*"`. The first block is the listed folder; each further block starts with
 * its share path (`\root\a\b`). `rootPrefix` is the root as smbclient prints it (`\root`, or `''` for the share root).
 */
export function parseRecursiveListing(output: string, rootPrefix: string, startFolderKey: string): SmbEntry[] {
  const entries: SmbEntry[] = [];
  let folderKey = startFolderKey;
  for (const line of output.split('\n')) {
    if (line.startsWith('\\')) {
      const relative = line.trimEnd().slice(rootPrefix.length).replace(/^\\+/, '');
      folderKey = relative === '' ? '' : `${relative.split('\\').join('/')}/`;
      continue;
    }
    const match = ENTRY.exec(line);
    if (!match) continue;
    const name = match[1] ?? '';
    if (name === '.' || name === '..') continue;
    entries.push({
      folderKey,
      name,
      isDirectory: (match[2] ?? '').includes('D'),
      size: Number(match[3]),
      modifiedAt: parseSmbDate(match[4] ?? '') ?? new Date(0),
    });
  }
  return entries;
}

/** Size, kind and write time from an `allinfo` answer. */
export function parseAllinfo(output: string): { isDirectory: boolean; size: number; modifiedAt: Date } | undefined {
  const attributes = /^attributes: ([A-Z]*) /m.exec(output);
  if (!attributes) return undefined;
  const stream = /^stream: \[::\$DATA\], (\d+) bytes/m.exec(output);
  const written = /^write_time:\s+(.+)$/m.exec(output);
  return {
    isDirectory: (attributes[1] ?? '').includes('D'),
    size: Number(stream?.[1] ?? 0),
    modifiedAt: parseSmbDate(written?.[1] ?? '') ?? new Date(0),
  };
}
