import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, isAbortError, sshConnectError, startRemoteCommand, type RemoteProcess, type RestoreResult, type SshTarget, toDumpHandle } from '@holdfast/sdk';
import type { SqliteSourceConfig } from '../config.js';
import { ORIGIN } from './origin.js';
import { CHECK_SCRIPT, DUMP_SCRIPT, EXIT, RESTORE_SCRIPT } from './remote-scripts.js';

/** The sqlite3 CLI on the SSH host, honouring `binDirectory`. */
function remoteCli(config: SqliteSourceConfig): string {
  return config.binDirectory ? path.posix.join(config.binDirectory, 'sqlite3') : 'sqlite3';
}

/**
 * Stops a remote tool once. When the signal aborted, the SDK already kills it (its own abort listener): a second,
 * concurrent kill() can wait forever on a helper channel of the closing connection, so it is skipped; a tool that
 * exited needs nothing; otherwise the kill is bounded.
 */
function stopRemote(remote: RemoteProcess, signal: AbortSignal): () => Promise<void> {
  let isExited = false;
  void remote.exited.then(() => (isExited = true));
  return async () => {
    if (isExited) return;
    if (signal.aborted) {
      await Promise.race([remote.exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      return;
    }
    await Promise.race([remote.kill(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  };
}

/** Runs one of the scripts over SSH; SSH login failures become AUTH/TRANSIENT errors naming SSH. */
async function startScript(ssh: SshTarget, script: string, args: string[], signal: AbortSignal): Promise<RemoteProcess> {
  return startRemoteCommand(ssh, { command: 'sh', args: ['-c', script, 'sh', ...args], signal }).catch((error: unknown) => {
    throw sshConnectError(ORIGIN, error);
  });
}

/** Maps a script's exit code to a coded error. */
function scriptError(code: number | null, stderr: string, what: string, ssh: SshTarget): AdapterError {
  const kind =
    code === EXIT.missing ? 'NOT_FOUND' : code === EXIT.io || code === null || /locked|busy/i.test(stderr) ? 'TRANSIENT' : 'CONFIG';
  const detail = code === EXIT.noCli ? `sqlite3 was not found on ${ssh.host} (install the sqlite3 package or set binDirectory): ${stderr}` : stderr;
  return new AdapterError(ORIGIN, kind, `${what} on ${ssh.host} failed (exit ${String(code)}): ${detail}`);
}

/** Removes what a killed script may have left (a staging directory, a half-written temp file). */
async function cleanUp(ssh: SshTarget, paths: string[]): Promise<void> {
  const remote = await startScript(ssh, 'rm -rf -- "$@"', paths, AbortSignal.timeout(30_000)).catch(() => undefined);
  remote?.stdout.resume();
  await remote?.exited;
}

/**
 * Version of the remote CLI and, with `file`, that the file exists (and with `readSchema`, a read of its schema:
 * proves it is a database). Answers the version.
 */
export async function remoteCheck(
  config: SqliteSourceConfig,
  ssh: SshTarget,
  file: string | undefined,
  signal: AbortSignal,
  readSchema = false,
): Promise<string> {
  const remote = await startScript(ssh, CHECK_SCRIPT, [remoteCli(config), file ?? '', readSchema ? '1' : '0'], signal);
  let out = '';
  remote.stdout.setEncoding('utf8');
  remote.stdout.on('data', (text: string) => (out += text));
  remote.stdin.end();
  const code = await remote.exited;
  if (code !== 0) throw scriptError(code, remote.stderrTail(), file ? `reading ${file}` : 'sqlite3 -version', ssh);
  const version = /^\d+\.\d+\.\d+/.exec(out.trim())?.[0];
  if (!version) throw new AdapterError(ORIGIN, 'CONFIG', `sqlite3 -version on ${ssh.host} answered "${out.trim()}"`);
  return version;
}

/** The remote online backup streamed back; the exit status is awaited after the last byte (truncation errors). */
async function* remoteDumpOutput(config: SqliteSourceConfig, ssh: SshTarget, file: string, signal: AbortSignal): AsyncGenerator<Buffer> {
  const staging = path.posix.join(config.tempDirectory ?? '/tmp', `holdfast-sqlite-${randomBytes(8).toString('hex')}`);
  const remote = await startScript(ssh, DUMP_SCRIPT, [remoteCli(config), file, String(config.busyTimeoutSeconds * 1000), staging], signal);
  const stop = stopRemote(remote, signal);
  let isComplete = false;
  try {
    remote.stdin.end();
    for await (const chunk of remote.stdout) yield chunk as Buffer;
    const code = await remote.exited;
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted');
    if (code !== 0) throw scriptError(code, remote.stderrTail(), `the online backup of ${file}`, ssh);
    isComplete = true;
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', 'the dump was aborted');
    throw error;
  } finally {
    await stop();
    if (!isComplete) await cleanUp(ssh, [staging]);
  }
}

/** Starts the SSH-mode dump; resolves once the remote copy is made and its first byte arrived. */
export function startRemoteDump(config: SqliteSourceConfig, ssh: SshTarget, file: string, signal: AbortSignal, engineVersion: string) {
  return toDumpHandle(remoteDumpOutput(config, ssh, file, signal), { origin: ORIGIN, signal, databases: [file], engineVersion, extension: '.sqlite' });
}

/** Restores onto `target` on the SSH host with the same checks and rollback as the local restore (RESTORE_SCRIPT). */
export async function restoreRemote(config: SqliteSourceConfig, ssh: SshTarget, stream: Readable, target: string, signal: AbortSignal): Promise<RestoreResult> {
  const temp = path.posix.join(path.posix.dirname(target), `.${path.posix.basename(target)}.holdfast-restore-${randomBytes(4).toString('hex')}`);
  const remote = await startScript(ssh, RESTORE_SCRIPT, [remoteCli(config), target, temp, config.keepPreviousFile ? '1' : '0'], signal);
  const stop = stopRemote(remote, signal);
  let out = '';
  remote.stdout.setEncoding('utf8');
  remote.stdout.on('data', (text: string) => (out += text));
  try {
    // A script that fails early closes the channel: its exit code says why better than the broken pipe does.
    await pipeline(stream, remote.stdin, { signal }).catch((error: unknown) => {
      if (signal.aborted) throw error;
    });
    const code = await remote.exited;
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', `restore into ${target} was aborted`);
    if (code !== 0) throw scriptError(code, remote.stderrTail(), `restore into ${target}`, ssh);
  } catch (error) {
    await stop();
    await cleanUp(ssh, [temp, `${temp}-wal`, `${temp}-shm`, `${temp}-journal`]);
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `restore into ${target} was aborted`);
    throw error;
  }
  const isReplaced = out.includes('moved=1');
  return { warnings: isReplaced && config.keepPreviousFile ? [`the replaced database was kept as ${target}.previous`] : [] };
}
