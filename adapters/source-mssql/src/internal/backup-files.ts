import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { AdapterError, connectSsh, sshConnectError, type LocalPathPolicy, type SftpSession, type SshClient, type SshTarget } from '@holdfast/sdk';
import type { MssqlSourceConfig } from '../config.js';
import { ORIGIN } from './origin.js';

/**
 * The server's backup directory seen from the Holdfast host: over SFTP, or mounted at `sharedDirectory`. SQL Server
 * writes and reads the `.bak` itself; Holdfast only streams it out (backup) or in (restore) and deletes it.
 */
export interface BackupFiles {
  /** Where the files are, for messages (`sftp://host/dir` or a local path). */
  readonly location: string;
  /** Fails (naming the cause) when the directory cannot be reached; runs before BACKUP so nothing is written in vain. */
  probe(): Promise<void>;
  read(name: string): Readable;
  write(name: string): Writable;
  /** Deletes a file; a missing file is fine (a failed BACKUP may have written nothing). */
  remove(name: string): Promise<void>;
  close(): Promise<void>;
}

/** The path SQL Server uses for a file in backupDirectory (Windows separators when the directory has them). */
export function serverPath(config: MssqlSourceConfig, name: string): string {
  const directory = config.backupDirectory;
  const isWindows = directory.includes('\\') || /^[A-Za-z]:/.test(directory);
  const separator = isWindows ? '\\' : '/';
  return directory.endsWith(separator) ? `${directory}${name}` : `${directory}${separator}${name}`;
}

/** Opens the transfer the config asks for (SSH login happens here, before any statement that writes). */
export async function openBackupFiles(config: MssqlSourceConfig, ssh: SshTarget | undefined, policy?: LocalPathPolicy): Promise<BackupFiles> {
  if (ssh) return SftpBackupFiles.open(ssh, config.ssh?.directory ?? config.backupDirectory);
  // Checked on every use, not only when the config was saved: a symlink or HOLDFAST_LOCAL_ROOTS may have changed.
  const directory = policy
    ? await policy.check(config.sharedDirectory!, 'storage').catch((error: unknown) => {
        if ((error as Error)?.name === 'LocalPathRefusedError') throw new AdapterError(ORIGIN, 'CONFIG', `sharedDirectory: ${(error as Error).message}`);
        throw error;
      })
    : config.sharedDirectory!;
  return new SharedBackupFiles(directory);
}

class SharedBackupFiles implements BackupFiles {
  readonly location: string;
  constructor(private readonly directory: string) {
    this.location = path.resolve(directory);
  }

  async probe(): Promise<void> {
    const found = await stat(this.location).catch((error: NodeJS.ErrnoException) => {
      throw new AdapterError(ORIGIN, 'CONFIG', `sharedDirectory ${this.location} cannot be read: ${error.code ?? error.message}`);
    });
    if (!found.isDirectory()) throw new AdapterError(ORIGIN, 'CONFIG', `sharedDirectory ${this.location} is not a directory`);
  }

  read(name: string): Readable {
    return createReadStream(path.join(this.location, name), { highWaterMark: 1024 * 1024 });
  }

  write(name: string): Writable {
    return createWriteStream(path.join(this.location, name), { flags: 'wx', mode: 0o640 });
  }

  async remove(name: string): Promise<void> {
    await rm(path.join(this.location, name), { force: true });
  }

  async close(): Promise<void> {}
}

class SftpBackupFiles implements BackupFiles {
  readonly location: string;
  private constructor(
    private readonly client: SshClient,
    private readonly sftp: SftpSession,
    private readonly directory: string,
    host: string,
  ) {
    this.location = `sftp://${host}${directory.startsWith('/') ? '' : '/'}${directory}`;
  }

  static async open(ssh: SshTarget, directory: string): Promise<SftpBackupFiles> {
    const client = await connectSsh(ssh).catch((error: unknown) => {
      throw sshConnectError(ORIGIN, error);
    });
    try {
      const sftp = await new Promise<SftpSession>((resolve, reject) => client.sftp((error, value) => (error ? reject(error) : resolve(value))));
      return new SftpBackupFiles(client, sftp, directory, ssh.host);
    } catch (error) {
      client.end();
      throw new AdapterError(ORIGIN, 'CONFIG', `the SFTP subsystem of ${ssh.host} is not available: ${(error as Error).message}`);
    }
  }

  private pathOf(name: string): string {
    return path.posix.join(this.directory, name);
  }

  async probe(): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      this.sftp.stat(this.directory, (error, stats) => {
        if (error) reject(new AdapterError(ORIGIN, 'CONFIG', `${this.location} cannot be read over SFTP: ${error.message}`));
        else if (!stats.isDirectory()) reject(new AdapterError(ORIGIN, 'CONFIG', `${this.location} is not a directory`));
        else resolve();
      }),
    );
  }

  read(name: string): Readable {
    return this.sftp.createReadStream(this.pathOf(name), { highWaterMark: 256 * 1024 });
  }

  write(name: string): Writable {
    return this.sftp.createWriteStream(this.pathOf(name), { flags: 'wx', mode: 0o640 });
  }

  async remove(name: string): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      this.sftp.unlink(this.pathOf(name), (error) => {
        // SFTP status 2 is NO_SUCH_FILE.
        if (error && error.code !== 2) reject(new AdapterError(ORIGIN, 'TRANSIENT', `cannot delete ${this.pathOf(name)} over SFTP: ${error.message}`));
        else resolve();
      }),
    );
  }

  async close(): Promise<void> {
    this.sftp.end();
    this.client.end();
  }
}
