// The parts of ssh2 1.17 this adapter uses. @types/ssh2 pins @types/node 18, which would clash with the
// workspace's Node 20 types, so the few signatures needed are declared here.
declare module 'ssh2' {
  import type { EventEmitter } from 'node:events';
  import type { Duplex, Readable } from 'node:stream';

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

  /** An exec channel: stdin/stdout as a Duplex, stderr beside it; 'exit' carries the remote exit code. */
  export interface ClientChannel extends Duplex {
    stderr: Readable;
    signal(name: string): boolean;
    close(): void;
  }

  export type Callback<T = void> = (error: (Error & { code?: number | string; level?: string }) | null | undefined, value: T) => void;

  export class Client extends EventEmitter {
    connect(config: ConnectConfig): this;
    exec(command: string, callback: Callback<ClientChannel>): boolean;
    end(): void;
    destroy(): void;
  }
}
