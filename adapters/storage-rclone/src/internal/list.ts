import { createInterface } from 'node:readline';
import type { StorageObjectInfo } from '@holdfast/sdk';
import { aborted, exitError } from './errors.js';
import { keyOfListed } from './keys.js';
import { startRclone } from './process.js';
import type { RcloneSession } from './session.js';

/** One entry of `rclone lsjson`. */
export interface LsjsonEntry {
  Path: string;
  Size: number;
  ModTime: string;
  IsDir: boolean;
}

/** lsjson prints `[`, one entry per line (comma-terminated but the last), then `]`. */
function parseLine(line: string): LsjsonEntry | undefined {
  const text = line.trim().replace(/,$/, '');
  if (text === '' || text === '[' || text === ']') return undefined;
  return JSON.parse(text) as LsjsonEntry;
}

/**
 * Lists the files below `path` recursively and yields those whose key starts with `prefix`, as rclone prints them
 * (no whole-listing buffer). Resolves `'missing'` instead when rclone says the folder does not exist.
 */
export async function* listFolder(
  session: RcloneSession,
  path: string,
  folderKey: string,
  prefix: string,
  signal?: AbortSignal,
): AsyncGenerator<StorageObjectInfo, 'listed' | 'missing'> {
  signal?.throwIfAborted();
  const run = startRclone(session, ['lsjson', '-R', '--files-only', '--no-mimetype', '--', path], { signal });
  try {
    const lines = createInterface({ input: run.child.stdout!, crlfDelay: Infinity });
    for await (const line of lines) {
      const entry = parseLine(line);
      if (!entry || entry.IsDir) continue;
      const key = keyOfListed(folderKey, entry.Path);
      if (key === undefined || !key.startsWith(prefix)) continue;
      yield { key, size: entry.Size, modifiedAt: new Date(entry.ModTime) };
    }
    const exit = await run.exited;
    if (signal?.aborted) throw aborted(`listing "${prefix}"`);
    if (exit.code === 3) return 'missing';
    if (exit.code !== 0) throw exitError(exit, `cannot list "${prefix}"`, session.secrets);
    return 'listed';
  } finally {
    await run.stop();
  }
}
