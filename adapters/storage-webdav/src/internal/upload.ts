import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, createByteCounter } from '@holdfast/sdk';
import type { DavSession } from './dav-session.js';
import { DavStatusError, WEBDAV_ORIGIN } from './errors.js';

/** Marks the error we inject to stop feeding a request that already failed, so the request's own error wins. */
const STOPPED = Symbol('upload stopped');

/**
 * Creates the collections of `folderKey` (relative to the root, `''` = root) like `mkdir -p`. The depth-0 PROPFIND
 * first also primes digest auth, so the streaming PUT after it is not answered 401 (a stream cannot be sent twice).
 * A MKCOL refused because a concurrent put created the collection first is fine: a PROPFIND afterwards decides.
 */
export async function ensureCollection(dav: DavSession, folderKey: string, signal?: AbortSignal): Promise<void> {
  const existing = await dav.statOrMissing(folderKey === '' ? '/' : `/${folderKey}`, signal);
  if (existing?.isCollection) return;
  if (folderKey === '') throw new AdapterError(WEBDAV_ORIGIN, 'NOT_FOUND', `the root folder ${dav.baseUrl} does not exist`);
  if (existing) throw new AdapterError(WEBDAV_ORIGIN, 'CONFIG', `/${folderKey} is a file, so no object can be stored below it`);
  let current = '';
  for (const segment of folderKey.split('/')) {
    current = `${current}/${segment}`;
    try {
      await dav.send('MKCOL', `${current}/`, [201], { signal });
    } catch (error) {
      if (!(error instanceof DavStatusError)) throw error;
      // A concurrent put may have created it first (Apache then answers 403 or 405): what is there now decides.
      if ((await dav.statOrMissing(current, signal))?.isCollection) continue;
      if (error.status === 409) {
        throw new AdapterError(WEBDAV_ORIGIN, 'NOT_FOUND', `cannot create ${current}: its parent does not exist (does the root ${dav.baseUrl} exist?)`);
      }
      throw error;
    }
  }
}

/** Where an upload goes: the key's folder (relative to the root) and its file name. */
export interface UploadTarget {
  parent: string;
  name: string;
}

/**
 * Streams `body` to a hidden temp file beside the target, checks the stored size, then MOVEs it over the target.
 * On any error or abort the temp file is deleted, so readers see the old object or the new one, never a part.
 */
export async function uploadAtomically(dav: DavSession, target: UploadTarget, body: Readable, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted();
  await ensureCollection(dav, target.parent, signal);
  const folder = target.parent === '' ? '' : `/${target.parent}`;
  const temp = `${folder}/.${target.name}.${randomBytes(8).toString('hex')}.partial`;
  const counter = createByteCounter();
  try {
    const feeding = pipeline(body, counter, { signal });
    const sending = dav.putStream(temp, counter, signal).finally(() => {
      // A request that ended without reading the whole body (an error answer) would leave the body blocked forever.
      if (!counter.readableEnded) counter.destroy(Object.assign(new Error('upload request ended'), { [STOPPED]: true }));
    });
    const [fed, sent] = await Promise.allSettled([feeding, sending]);
    signal?.throwIfAborted();
    if (fed.status === 'rejected' && !(fed.reason as Record<symbol, unknown>)[STOPPED]) throw fed.reason;
    if (sent.status === 'rejected') throw sent.reason;
    if (fed.status === 'rejected') throw fed.reason;
    // A server (or a digest re-send of an already consumed stream) may store fewer bytes than we sent.
    const stored = await dav.statOrMissing(temp);
    if (stored?.size !== counter.bytes) {
      throw new AdapterError(WEBDAV_ORIGIN, 'TRANSIENT', `the server stored ${stored?.size ?? 'no'} bytes of the ${counter.bytes} sent`);
    }
    signal?.throwIfAborted();
    await dav.move(temp, `${folder}/${target.name}`);
    return counter.bytes;
  } catch (error) {
    body.destroy();
    counter.destroy();
    await removeUntilGone(dav, temp);
    throw error;
  }
}

/**
 * Deletes a temp file and makes sure it stays gone: a server may still be finishing the aborted PUT (Apache stores
 * what arrived when it notices the closed connection) after our DELETE answered, and would leave the part behind.
 * Best effort over about three seconds; a leftover is swept by a later listing once it is a day old.
 */
async function removeUntilGone(dav: DavSession, temp: string): Promise<void> {
  for (let attempt = 0; attempt < 12; attempt++) {
    await dav.removeIfPresent(temp).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const left = await dav.statOrMissing(temp).catch(() => undefined);
    if (left === undefined) return;
  }
}
