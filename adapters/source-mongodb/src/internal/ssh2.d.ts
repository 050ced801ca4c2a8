// The parts of ssh2 1.17 the SSH port forward uses. @types/ssh2 pins @types/node 18, which would clash with the
// workspace's Node 20 types, so the few signatures needed are declared here (as the sdk's remote-exec does).
declare module 'ssh2' {
  import type { EventEmitter } from 'node:events';
  import type { Duplex } from 'node:stream';

  export interface ConnectConfig {
    host: string;
    port: number;
    username: string;
    password?: string;
    privateKey?: string | Buffer;
    passphrase?: string;
    readyTimeout?: number;
    hostVerifier?: (key: Buffer) => boolean;
  }

  export type ClientChannel = Duplex;

  export class Client extends EventEmitter {
    connect(config: ConnectConfig): this;
    forwardOut(srcIP: string, srcPort: number, dstIP: string, dstPort: number, callback: (error: Error | undefined, channel: ClientChannel) => void): boolean;
    end(): void;
    destroy(): void;
  }
}
