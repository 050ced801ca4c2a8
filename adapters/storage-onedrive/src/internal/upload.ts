import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { AdapterError, chunksOf } from '@holdfast/sdk';
import type { GraphApi } from './api.js';
import { ONEDRIVE_ORIGIN } from './errors.js';

/** The fields of a driveItem the adapter reads. */
export interface DriveItem {
  id: string;
  name: string;
  size?: number;
  lastModifiedDateTime: string;
  file?: object;
  folder?: { childCount?: number };
}

/** Receives each upload session URL as soon as it exists (tests and logs follow unfinished sessions with it). */
export type SessionObserver = (uploadUrl: string) => void;

type Chunk = { bytes: Buffer; offset: number; isLast: boolean };

/** Bodies up to this size go as one simple upload (`PUT …/content`, documented for files up to 250 MB). */
const SIMPLE_UPLOAD_MAX = 4 * 1024 * 1024;

async function* prepend(first: Chunk, rest: AsyncGenerator<Chunk>): AsyncGenerator<Chunk> {
  yield first;
  yield* rest;
}

function sizeMismatch(declared: number, actual: number): AdapterError {
  return new AdapterError(ONEDRIVE_ORIGIN, 'CONFIG', `the body has ${actual > declared ? 'more' : 'fewer'} bytes than the declared size ${declared}`);
}

/**
 * Sends `chunks` to a new upload session for `path` (conflictBehavior replace). OneDrive keeps the bytes in a
 * temporary location and shows the file only when the last byte arrived, so a failed or aborted upload leaves nothing
 * visible and an old version intact; the session is then cancelled with a DELETE of its URL (documented, 204).
 */
async function sessionUpload(api: GraphApi, path: string, chunks: AsyncIterable<Chunk>, total: number, options: UploadOptions): Promise<DriveItem> {
  const { signal } = options;
  const session = await api.json<{ uploadUrl: string }>('POST', `${path}/createUploadSession`, { item: { '@microsoft.graph.conflictBehavior': 'replace' } }, signal);
  options.onSession?.(session.uploadUrl);
  try {
    for await (const chunk of chunks) {
      signal?.throwIfAborted();
      const end = chunk.offset + chunk.bytes.length;
      if (end > total || (chunk.isLast && end !== total)) throw sizeMismatch(total, end);
      if (chunk.bytes.length === 0) continue;
      const response = await api.send(session.uploadUrl, {
        method: 'PUT',
        headers: { 'content-range': `bytes ${chunk.offset}-${end - 1}/${total}` },
        body: chunk.bytes,
      }, { signal, isAuthorized: false });
      if (response.status === 200 || response.status === 201) return (await response.json()) as DriveItem;
      await response.body?.cancel();
    }
    throw new Error(`OneDrive did not complete the upload after all ${total} bytes`);
  } catch (error) {
    await api.send(session.uploadUrl, { method: 'DELETE' }, { isAuthorized: false }).then((r) => r.body?.cancel(), () => undefined);
    throw error;
  }
}

/**
 * OneDrive needs the total size in every fragment's Content-Range (no `*`), so a body of unknown size that does not fit
 * one fragment is first written to a private temp file (mode 0600, removed afterwards), then uploaded from it. Memory
 * stays at one fragment; disk use is the body's size for the duration of the upload.
 */
async function spooled(api: GraphApi, path: string, first: Chunk, rest: AsyncGenerator<Chunk>, options: UploadOptions): Promise<DriveItem> {
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-onedrive-'));
  try {
    const file = join(dir, 'spool');
    const handle = await open(file, 'wx', 0o600);
    let total = 0;
    try {
      for await (const chunk of prepend(first, rest)) {
        options.signal?.throwIfAborted();
        await handle.write(chunk.bytes, 0, chunk.bytes.length);
        total += chunk.bytes.length;
      }
    } finally {
      await handle.close();
    }
    const fromFile = chunksOf(createReadStream(file, { highWaterMark: 1024 * 1024 }), options.fragmentBytes);
    return await sessionUpload(api, path, fromFile, total, options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface UploadOptions {
  fragmentBytes: number;
  knownSize?: number;
  signal?: AbortSignal;
  onSession?: SessionObserver;
}

/** Uploads `body` to the item `path` (`root:/a/b.bin:`): simple upload when small, else an upload session. */
export async function uploadFile(api: GraphApi, path: string, body: Readable, options: UploadOptions): Promise<DriveItem> {
  const chunks = chunksOf(body, options.fragmentBytes);
  const first = (await chunks.next()).value as Chunk;
  if (first.isLast) {
    if (options.knownSize !== undefined && options.knownSize !== first.bytes.length) throw sizeMismatch(options.knownSize, first.bytes.length);
    if (first.bytes.length <= SIMPLE_UPLOAD_MAX) {
      // One request: the new content replaces the old only when it completed.
      const response = await api.send(`${api.drive}/${path}/content?@microsoft.graph.conflictBehavior=replace`, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: first.bytes,
      }, { signal: options.signal });
      return (await response.json()) as DriveItem;
    }
    return sessionUpload(api, path, prepend(first, chunks), first.bytes.length, options);
  }
  if (options.knownSize !== undefined) return sessionUpload(api, path, prepend(first, chunks), options.knownSize, options);
  return spooled(api, path, first, chunks, options);
}
