import type { Readable } from 'node:stream';
import { chunksOf } from '@holdfast/sdk';
import type { DropboxApi } from './api.js';

/** The file metadata Dropbox answers for a committed upload (and `files/get_metadata`). */
export interface DropboxFileMetadata {
  '.tag'?: 'file' | 'folder' | 'deleted';
  name: string;
  path_lower: string;
  path_display: string;
  size: number;
  server_modified: string;
}

/** Receives the session id as soon as it exists, so tests and logs can follow an unfinished session. */
export type SessionObserver = (sessionId: string) => void;

/**
 * Streams `body` into an upload session and commits it to `path` with `files/upload_session/finish` (mode overwrite).
 * Dropbox shows nothing until the commit, so a failed or aborted upload leaves no file and an existing one intact;
 * the uncommitted session has no cancel call in the API and expires on Dropbox's side (at most 7 days).
 */
export async function uploadFile(
  api: DropboxApi,
  path: string,
  body: Readable,
  options: { chunkBytes: number; signal?: AbortSignal; onSession?: SessionObserver },
): Promise<DropboxFileMetadata> {
  let sessionId: string | undefined;
  for await (const chunk of chunksOf(body, options.chunkBytes)) {
    options.signal?.throwIfAborted();
    if (chunk.isLast) {
      if (sessionId === undefined) {
        // Small file: one request, still atomic (the file appears complete or not at all).
        return api.upload<DropboxFileMetadata>('files/upload', { path, mode: 'overwrite', autorename: false, mute: true, strict_conflict: false }, chunk.bytes, options.signal);
      }
      return api.upload<DropboxFileMetadata>(
        'files/upload_session/finish',
        { cursor: { session_id: sessionId, offset: chunk.offset }, commit: { path, mode: 'overwrite', autorename: false, mute: true, strict_conflict: false } },
        chunk.bytes,
        options.signal,
      );
    }
    if (sessionId === undefined) {
      const started = await api.upload<{ session_id: string }>('files/upload_session/start', { close: false }, chunk.bytes, options.signal);
      sessionId = started.session_id;
      options.onSession?.(sessionId);
    } else {
      await api.upload('files/upload_session/append_v2', { cursor: { session_id: sessionId, offset: chunk.offset }, close: false }, chunk.bytes, options.signal);
    }
  }
  throw new Error('unreachable: the chunk reader always ends with a last chunk');
}
