import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';

/**
 * Unpacks the base backup's tar (the data directory as `pg_basebackup -Ft -D -` writes it) into `dataDir`, one
 * member at a time: the base is never held in memory. Only files and folders are written; a member that would land
 * outside `dataDir` fails the restore, and links or special files (a base written to stdout has no tablespace
 * links) are left out and named in `warnings`. PostgreSQL wants its folders private (0700) and its files 0600.
 */
export async function extractBase(baseStream: Readable, dataDir: string, signal: AbortSignal, warnings: string[]): Promise<{ files: number; bytes: number }> {
  const extract = tar.extract();
  let files = 0;
  let bytes = 0;
  extract.on('entry', (header, body, next) => {
    const skip = () => {
      body.once('end', () => next());
      body.resume();
    };
    const relative = path.posix.normalize(header.name.replace(/^\.\//, ''));
    if (relative === '.' || relative === '') return skip();
    if (path.posix.isAbsolute(relative) || relative === '..' || relative.startsWith('../')) {
      extract.destroy(new AdapterError(ORIGIN, 'CONFIG', `the base backup holds "${header.name}", a member outside the data directory; refusing to restore it`));
      return;
    }
    const destination = path.join(dataDir, ...relative.split('/'));
    if (header.type === 'directory') {
      mkdir(destination, { recursive: true, mode: 0o700 }).then(skip, (error: unknown) => extract.destroy(error as Error));
      return;
    }
    if (header.type !== 'file' && header.type !== 'contiguous-file') {
      warnings.push(`base backup member ${header.name} (${header.type}) was left out: only files and folders are restored (tablespaces are not supported)`);
      return skip();
    }
    files += 1;
    bytes += header.size ?? 0;
    mkdir(path.dirname(destination), { recursive: true, mode: 0o700 })
      .then(() => pipeline(body, createWriteStream(destination, { mode: 0o600, flags: 'wx' })))
      .then(() => next(), (error: unknown) => extract.destroy(error as Error));
  });
  await pipeline(baseStream, extract, { signal }).catch((error: unknown) => {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted while unpacking the base backup');
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `cannot unpack the base backup into ${dataDir}: ${(error as Error).message}`, { cause: error });
  });
  return { files, bytes };
}
