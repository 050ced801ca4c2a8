import { randomBytes } from 'node:crypto';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ChildProcess } from 'node:child_process';
import { AdapterError, createByteCounter } from '@holdfast/sdk';
import { SMB_ORIGIN, statusError, type SmbStatus } from './errors.js';
import { foldersDownTo, joinRemote, quote } from './paths.js';
import type { Smbclient } from './smbclient.js';

/** Where an upload goes: the root, the key's parent folder (relative to the root) and its file name. */
export interface UploadTarget {
  root: string;
  parent: string;
  name: string;
}

/** mkdir of a folder that exists, and rmdir of one that is not empty, are expected and harmless. */
export function isHarmless(status: SmbStatus): boolean {
  return (
    (status.status === 'NT_STATUS_OBJECT_NAME_COLLISION' && status.line.includes('making remote directory')) ||
    status.line.includes('removing remote directory')
  );
}

/** rmdir commands for the folders of `parent`, deepest first; never the root (rmdir refuses non-empty folders). */
export function removeEmptyFolders(root: string, parent: string): string[] {
  return foldersDownTo(parent)
    .reverse()
    .map((folder) => `rmdir ${quote(joinRemote(root, folder))}`);
}

/**
 * Feeds smbclient's stdin and closes it only when the body ended cleanly. On an error (or abort) it kills smbclient
 * first: had stdin merely been closed, smbclient would take the end of input for the end of the file and store a
 * shortened file as complete.
 */
function stdinOf(child: ChildProcess): Writable {
  const stdin = child.stdin as Writable;
  stdin.on('error', () => undefined); // smbclient exited early; its own status explains why
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (stdin.write(chunk)) callback();
      else stdin.once('drain', () => callback());
    },
    final(callback) {
      stdin.end(callback);
    },
    destroy(error, callback) {
      if (error) child.kill('SIGKILL');
      callback(error);
    },
  });
}

/**
 * Streams `body` through smbclient's stdin (`put -`, which ends the run, so it comes after the `mkdir`s) to a hidden
 * temp file beside the target. Only when the body ended cleanly, smbclient reported no error and `allinfo` shows
 * the server holds every byte is the temp file renamed over the target (`rename -f`). Otherwise the temp file and
 * emptied folders are removed: readers see the old object or the new one, never a part.
 */
export async function uploadAtomically(smb: Smbclient, target: UploadTarget, body: Readable, signal?: AbortSignal): Promise<number> {
  signal?.throwIfAborted();
  const folder = joinRemote(target.root, target.parent);
  const temp = joinRemote(folder, `.${target.name}.${randomBytes(8).toString('hex')}.partial`);
  const mkdirs = foldersDownTo(target.parent).map((relative) => `mkdir ${quote(joinRemote(target.root, relative))}`);
  const counter = createByteCounter();
  const child = smb.spawn([...mkdirs, `put - ${quote(temp)}`], { hasInput: true });
  const exited = smb.finished(child);
  try {
    const [fed, ran] = await Promise.allSettled([pipeline(body, counter, stdinOf(child), { signal }), exited]);
    signal?.throwIfAborted();
    if (ran.status === 'rejected') throw ran.reason;
    const failure = ran.value.statuses.find((status) => !isHarmless(status));
    if (fed.status === 'rejected' && (!failure || child.signalCode === 'SIGKILL')) throw fed.reason;
    if (failure) throw statusError(failure, `cannot upload to ${smb.where}/${temp}`);
    if (ran.value.exitCode !== 0) throw new AdapterError(SMB_ORIGIN, 'TRANSIENT', `smbclient put exited with ${ran.value.exitCode}: ${ran.value.messages.trim().slice(-300)}`);
    signal?.throwIfAborted();
    const renamed = await smb.run([`rename ${quote(temp)} ${quote(joinRemote(folder, target.name))} -f`]);
    if (renamed.statuses[0]) throw statusError(renamed.statuses[0], `cannot move the upload into place on ${smb.where}`);
    return counter.bytes;
  } catch (error) {
    body.destroy();
    child.kill('SIGKILL');
    await exited.catch(() => undefined);
    await smb.run([`del ${quote(temp)}`, ...removeEmptyFolders(target.root, target.parent)]).catch(() => undefined);
    throw error;
  }
}
