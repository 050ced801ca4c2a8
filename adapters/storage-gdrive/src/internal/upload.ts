import type { Readable } from 'node:stream';
import { chunksOf } from '@holdfast/sdk';
import type { DriveApi } from './api.js';
import type { DriveFile } from './files.js';

/** Receives the session URI as soon as it exists (tests and logs follow unfinished sessions with it). */
export type SessionObserver = (sessionUri: string) => void;

/** The first byte Drive has not received yet, from the `Range: bytes=0-N` header of a 308 (none: 0). */
function receivedUpTo(response: Response): number {
  const match = /bytes=0-(\d+)/.exec(response.headers.get('range') ?? '');
  return match ? Number(match[1]) + 1 : 0;
}

/**
 * Streams `body` through a Drive resumable upload: a new file (POST with name and parent) or new content of an
 * existing one (PATCH `files/<id>`, so an overwrite replaces content atomically). Drive creates or changes the file
 * only when the last chunk arrives, so a failed or aborted upload leaves nothing visible; the session is then
 * cancelled with a DELETE of its URI (best effort; Drive also drops unfinished sessions after about a week).
 */
export async function uploadFile(
  api: DriveApi,
  target: { folderId: string; name: string; existingId?: string },
  body: Readable,
  options: { chunkBytes: number; signal?: AbortSignal; onSession?: SessionObserver },
): Promise<DriveFile> {
  const { signal } = options;
  const init = target.existingId
    ? { method: 'PATCH', url: `${api.base}/upload/drive/v3/files/${encodeURIComponent(target.existingId)}`, metadata: {} }
    : { method: 'POST', url: `${api.base}/upload/drive/v3/files`, metadata: { name: target.name, parents: [target.folderId] } };
  const started = await api.send(`${init.url}?uploadType=resumable&supportsAllDrives=true&fields=id,name,size,modifiedTime`, {
    method: init.method,
    headers: { 'content-type': 'application/json; charset=UTF-8', 'x-upload-content-type': 'application/octet-stream' },
    body: JSON.stringify(init.metadata),
  }, { signal });
  await started.body?.cancel();
  const session = started.headers.get('location');
  if (!session) throw new Error('Drive answered the resumable upload request without a session URI (Location header)');
  options.onSession?.(session);
  try {
    for await (const chunk of chunksOf(body, options.chunkBytes)) {
      signal?.throwIfAborted();
      const total = chunk.isLast ? String(chunk.offset + chunk.bytes.length) : '*';
      let sent = 0;
      // Drive may keep fewer bytes than sent (308 with a shorter Range): resend the rest of the chunk.
      for (;;) {
        const start = chunk.offset + sent;
        const part = chunk.bytes.subarray(sent);
        const contentRange = part.length === 0 ? `bytes */${total}` : `bytes ${start}-${start + part.length - 1}/${total}`;
        const response = await api.send(session, { method: 'PUT', headers: { 'content-range': contentRange }, body: part }, { signal, accept: [308] });
        if (response.status !== 308) return (await response.json()) as DriveFile;
        await response.body?.cancel();
        const next = receivedUpTo(response);
        if (next >= chunk.offset + chunk.bytes.length) break;
        if (next < start) throw new Error(`Drive lost bytes of the upload (has ${next}, expected at least ${start})`);
        sent = next - chunk.offset;
      }
    }
    throw new Error('Drive did not finish the upload after its last chunk');
  } catch (error) {
    await api.send(session, { method: 'DELETE' }, { accept: [499, 404, 410] }).then((r) => r.body?.cancel(), () => undefined);
    throw error;
  }
}
