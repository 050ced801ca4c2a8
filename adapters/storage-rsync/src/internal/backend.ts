import type { Readable } from 'node:stream';
import type { ByteRange, StorageObjectInfo } from '@holdfast/sdk';

/** A put's target, validated. */
export interface PutTarget {
  key: string;
  parent: string;
  name: string;
}

/** What each transport (SSH, daemon) implements; keys arrive validated. */
export interface RsyncBackend {
  /** Resolves an "ok" message, or throws an AdapterError saying what is wrong. Writes nothing. */
  check(): Promise<string>;
  put(target: PutTarget, body: Readable, options: { size?: number; signal?: AbortSignal }): Promise<number>;
  get(key: string, options: { range?: ByteRange; signal?: AbortSignal }): Promise<Readable>;
  list(folderKey: string, prefix: string, signal?: AbortSignal): AsyncIterable<StorageObjectInfo>;
  stat(key: string): Promise<StorageObjectInfo>;
  delete(key: string, parent: string): Promise<void>;
  dispose(): Promise<void>;
}
