import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Client } from 'basic-ftp';
import { pipeline } from 'node:stream/promises';
import { AdapterError, createByteCounter, type ByteCounter } from '@holdfast/sdk';
import { FTP_ORIGIN } from './errors.js';
import type { FtpPool } from './pool.js';
import { makeDirectories, removeEmptyParents, removeIfPresent, renameOver, sizeOrMissing } from './remote-ops.js';

/** Marks the error we inject to stop feeding a transfer that already failed, so the transfer's own error wins. */
const STOPPED = Symbol('upload stopped');

/**
 * The source handed to basic-ftp. An empty body over FTPS needs care: ending the data connection right after its TLS
 * 1.3 handshake makes vsftpd (and, per lftp's issue 420, other servers) break the transfer ("wrong version number").
 * So the end of an empty body waits until the server's session ticket arrived on the data connection (at most 1 s).
 */
function uploadSource(client: Client, counter: ByteCounter): Readable {
  const source = new PassThrough();
  counter.pipe(source, { end: false });
  counter.once('error', (error) => source.destroy(error));
  counter.once('end', () => {
    if (counter.bytes > 0) return source.end();
    let waited = 0;
    const poll = setInterval(() => {
      const socket = client.ftp.dataSocket as TLSSocket | undefined;
      const isSecure = socket !== undefined && typeof socket.getCipher === 'function';
      if ((socket && !isSecure) || waited >= 1000) {
        clearInterval(poll);
        source.end();
      } else if (isSecure && socket.getCipher() !== undefined) {
        clearInterval(poll);
        const finish = () => source.end();
        const timer = setTimeout(finish, 250);
        socket.once('session', () => {
          clearTimeout(timer);
          setImmediate(finish);
        });
      }
      waited += 10;
    }, 10);
  });
  return source;
}

/** Where an upload goes: the key's parent folder (relative to the root) and its file name. */
export interface UploadTarget {
  parent: string;
  name: string;
}

function isStopped(error: unknown): boolean {
  return Boolean((error as Record<symbol, unknown> | null)?.[STOPPED]);
}

/**
 * Streams `body` (STOR) to a hidden temp file beside the target, checks the stored size, then renames it over the
 * target. On any error or abort the temp file and the folders this upload created are removed (over a fresh
 * connection when the failure closed this one), so readers see the old object or the new one, never a part.
 */
export async function uploadAtomically(pool: FtpPool, target: UploadTarget, body: Readable, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted();
  let temp: string | undefined;
  let root = '';
  try {
    return await pool.use(async (client, absoluteRoot) => {
      root = absoluteRoot;
      const directory = posix.join(root, target.parent);
      await makeDirectories(client, root, target.parent, pool.where);
      temp = posix.join(directory, `.${target.name}.${randomBytes(8).toString('hex')}.partial`);
      const counter = createByteCounter();
      // FTP has no way to cancel a STOR but closing the connection; the pool then drops it.
      const onAbort = () => client.close();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const feeding = pipeline(body, counter, { signal });
        const sending = client.uploadFrom(uploadSource(client, counter), temp).finally(() => {
          // A transfer that ended without reading the whole body (an error reply) would leave the body blocked.
          if (!counter.readableEnded) counter.destroy(Object.assign(new Error('upload transfer ended'), { [STOPPED]: true }));
        });
        const [fed, sent] = await Promise.allSettled([feeding, sending]);
        signal?.throwIfAborted();
        if (fed.status === 'rejected' && !isStopped(fed.reason)) throw fed.reason;
        if (sent.status === 'rejected') throw sent.reason;
        if (fed.status === 'rejected') throw fed.reason;
      } finally {
        signal?.removeEventListener('abort', onAbort);
        counter.destroy();
      }
      // A dropped data connection can look like a clean end of the transfer to both sides; the size tells.
      const stored = await sizeOrMissing(client, temp);
      if (stored !== counter.bytes) {
        throw new AdapterError(FTP_ORIGIN, 'TRANSIENT', `the server stored ${stored ?? 'no'} bytes of the ${counter.bytes} sent`);
      }
      signal?.throwIfAborted();
      await renameOver(client, temp, posix.join(directory, target.name));
      return counter.bytes;
    });
  } catch (error) {
    body.destroy();
    const leftover = temp;
    if (leftover !== undefined) {
      await pool
        .use(async (client) => {
          await removeIfPresent(client, leftover);
          await removeEmptyParents(client, root, target.parent);
        })
        .catch(() => undefined);
    }
    throw error;
  }
}
