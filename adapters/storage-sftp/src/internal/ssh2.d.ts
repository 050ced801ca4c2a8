// The parts of ssh2 1.17 this adapter uses. @types/ssh2 pins @types/node 18, which would clash with the
// workspace's Node 20 types, so the few signatures needed are declared here.
declare module 'ssh2' {
  import type { EventEmitter } from 'node:events';
  import type { Readable, Writable } from 'node:stream';

  export interface ConnectConfig {
    host: string;
    port: number;
    username: string;
    password?: string;
    privateKey?: string | Buffer;
    passphrase?: string;
    readyTimeout?: number;
    keepaliveInterval?: number;
    keepaliveCountMax?: number;
    hostVerifier?: (key: Buffer) => boolean;
  }

  export interface Stats {
    mode: number;
    size: number;
    mtime: number;
    isDirectory(): boolean;
    isFile(): boolean;
    isSymbolicLink(): boolean;
  }

  export interface FileEntry {
    filename: string;
    longname: string;
    attrs: Stats;
  }

  export type Callback<T = void> = (error: (Error & { code?: number | string }) | null | undefined, value: T) => void;

  export interface SFTPWrapper extends EventEmitter {
    createReadStream(path: string, options?: { start?: number; end?: number; highWaterMark?: number }): Readable;
    createWriteStream(path: string, options?: { flags?: string; mode?: number; highWaterMark?: number }): Writable;
    stat(path: string, callback: Callback<Stats>): void;
    lstat(path: string, callback: Callback<Stats>): void;
    realpath(path: string, callback: Callback<string>): void;
    readdir(path: string, callback: Callback<FileEntry[]>): void;
    mkdir(path: string, callback: Callback): void;
    rmdir(path: string, callback: Callback): void;
    unlink(path: string, callback: Callback): void;
    rename(from: string, to: string, callback: Callback): void;
    ext_openssh_rename(from: string, to: string, callback: Callback): void;
    end(): void;
    /** Extensions the server announced (`name -> version`); read to pick posix-rename. */
    _extensions?: Record<string, string>;
  }

  export class Client extends EventEmitter {
    connect(config: ConnectConfig): this;
    sftp(callback: Callback<SFTPWrapper>): void;
    end(): void;
    destroy(): void;
  }
}
