import type { StorageObjectInfo } from '@holdfast/sdk';
import { isTempName } from './keys.js';
import { normalizeStorageKey, splitStorageKey } from '@holdfast/sdk';

/** One line of `rsync --list-only --no-h`: `-rw-r--r--     3000000 2026/11/24 08:37:07 dir/name`. */
const LINE = /^([-dlpscb])\S{9}\s+(\d+) (\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d) (.+)$/;

/** A parsed listing line. */
export interface ListedEntry {
  isFile: boolean;
  path: string;
  size: number;
  modifiedAt: Date;
}

/** rsync escapes unprintable bytes as `\#ooo` (octal); -8 keeps UTF-8 as it is. */
function unescape(name: string): string {
  return name.replace(/\\#([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Parses one line; times are read as UTC (the commands run with TZ=UTC0). */
export function parseListLine(line: string): ListedEntry | undefined {
  const match = LINE.exec(line);
  if (!match) return undefined;
  const [, type, size, year, month, day, hour, minute, second, name] = match;
  return {
    isFile: type === '-',
    path: unescape(name!),
    size: Number(size),
    modifiedAt: new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second))),
  };
}

/** The object of a listed regular file below `folderKey`, or undefined for folders, temp files and non-keys. */
export function objectOf(entry: ListedEntry, folderKey: string, prefix: string): StorageObjectInfo | undefined {
  if (!entry.isFile) return undefined;
  const key = `${folderKey}${entry.path}`;
  if (!key.startsWith(prefix) || isTempName(splitStorageKey(key).name)) return undefined;
  try {
    normalizeStorageKey(key);
  } catch {
    return undefined;
  }
  return { key, size: entry.size, modifiedAt: entry.modifiedAt };
}
