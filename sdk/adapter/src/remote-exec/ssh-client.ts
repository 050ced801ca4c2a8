import type { EventEmitter } from 'node:events';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { SshTarget } from './ssh-connection.js';

// ssh2 1.17 ships no types, and @types/ssh2 pins @types/node 18, which clashes with the workspace's Node 20 types.
// The parts of its client that Holdfast uses are declared once here and exported, so an adapter that works on the
// connection `connectSsh` answers (port forwards, SFTP) needs no `declare module 'ssh2'` of its own.

/** What ssh2's `Client.connect` takes: the login of an `SshTarget`, with ssh2's own timeout and host key check. */
export type SshConnectConfig = Pick<SshTarget, 'host' | 'port' | 'username' | 'password' | 'privateKey' | 'passphrase'> & {
  readyTimeout?: number;
  hostVerifier?: (key: Buffer) => boolean;
};

/** A command's channel: its stdout (read) and stdin (write), with stderr beside them. */
export interface SshExecChannel extends Duplex {
  stderr: Readable;
  close(): void;
}

/** ssh2's node-style callback; SFTP errors carry the SFTP status as `code` (2 is NO_SUCH_FILE). */
export type SshCallback<T = void> = (error: (Error & { code?: number | string }) | null | undefined, value: T) => void;

/** What an SFTP `stat` answers. */
export interface SftpStats {
  mode: number;
  size: number;
  isDirectory(): boolean;
  isFile(): boolean;
}

/** An SFTP session on a connection ({@link SshClient.sftp}). */
export interface SftpSession extends EventEmitter {
  createReadStream(path: string, options?: { highWaterMark?: number }): Readable;
  createWriteStream(path: string, options?: { flags?: string; mode?: number; highWaterMark?: number }): Writable;
  stat(path: string, callback: SshCallback<SftpStats>): void;
  unlink(path: string, callback: SshCallback): void;
  end(): void;
}

/** A logged-in SSH connection, as `connectSsh` answers it. */
export interface SshClient extends EventEmitter {
  exec(command: string, callback: (error: Error | undefined, channel: SshExecChannel) => void): boolean;
  /** A `direct-tcpip` channel: a TCP connection made by the SSH host (needs `AllowTcpForwarding`). */
  forwardOut(srcIP: string, srcPort: number, dstIP: string, dstPort: number, callback: (error: Error | undefined, channel: Duplex) => void): boolean;
  /** A `direct-streamlocal@openssh.com` channel: a connection to a unix socket on the SSH host. */
  openssh_forwardOutStreamLocal(socketPath: string, callback: (error: Error | undefined, channel: Duplex) => void): boolean;
  sftp(callback: SshCallback<SftpSession>): void;
  end(): void;
  destroy(): void;
}

/** A client before its login: only `connectSsh` and `fetchHostKeyFingerprint` call `connect`. */
export interface UnconnectedSshClient extends SshClient {
  connect(config: SshConnectConfig): this;
}
