// The parts of ssh2 1.17 this adapter uses (through the SDK's connectSsh). @types/ssh2 pins @types/node 18, which
// would clash with the workspace's Node 20 types, so the few signatures needed are declared here.
declare module 'ssh2' {
  import type { EventEmitter } from 'node:events';
  import type { Readable, Writable } from 'node:stream';

  export interface Stats {
    mode: number;
    size: number;
    isDirectory(): boolean;
    isFile(): boolean;
  }

  export type Callback<T = void> = (error: (Error & { code?: number | string }) | null | undefined, value: T) => void;

  export interface SFTPWrapper extends EventEmitter {
    createReadStream(path: string, options?: { highWaterMark?: number }): Readable;
    createWriteStream(path: string, options?: { flags?: string; mode?: number; highWaterMark?: number }): Writable;
    stat(path: string, callback: Callback<Stats>): void;
    unlink(path: string, callback: Callback): void;
    end(): void;
  }

  export class Client extends EventEmitter {
    sftp(callback: Callback<SFTPWrapper>): void;
    end(): void;
    destroy(): void;
  }
}
