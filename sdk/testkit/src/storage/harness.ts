import { createAdapterInstance } from '../helpers/instantiate.js';
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import {
  isAdapterError,
  type AdapterContext,
  type StorageAdapter,
  type StorageCapabilities,
  type StorageObjectInfo,
} from '@holdfast/sdk';
import { deterministicStream } from '../helpers/random-stream.js';
import { sha256OfStream } from '../helpers/hashing.js';

/** The check groups of the storage suite; pass names to `disable` to switch groups off. */
export const STORAGE_CHECK_GROUPS = [
  'streaming',
  'range reads',
  'listing',
  'stat',
  'delete',
  'not found',
  'atomic put',
  'concurrency',
  'overwrite',
  'key safety',
  'health check',
] as const;

/** One of {@link STORAGE_CHECK_GROUPS}. */
export type StorageCheckGroup = (typeof STORAGE_CHECK_GROUPS)[number];

/** Options of `describeStorageAdapter`. */
export interface StorageSuiteOptions<C = unknown> {
  /** The adapter's default export. */
  definition: unknown;
  /** A fresh, working config per check (a new temp dir, bucket prefix...): every check starts on an empty destination. */
  config(): C | Promise<C>;
  /** A config that passes schema validation but cannot work (missing directory, wrong password). */
  badConfig: unknown | (() => unknown | Promise<unknown>);
  /** Removes what a check left behind, given the config it ran with. */
  cleanup?(config: C): void | Promise<void>;
  /** Groups to switch off (a reason belongs in the adapter's README). Capability-driven groups switch themselves. */
  disable?: StorageCheckGroup[];
  /** Why each switched-off group does not apply; shown in the skipped tests' names. */
  disableReasons?: Partial<Record<StorageCheckGroup, string>>;
  /** Size of the streamed round trip (default 64 MiB). */
  largeObjectBytes?: number;
  /** How much the process RSS may grow while streaming (default 64 MiB). */
  rssBudgetBytes?: number;
  /** Extra adapter context (logger, credentials). */
  context?: Partial<AdapterContext>;
}

/** Runs `work` with a fresh adapter instance on a fresh config and tears both down. */
export async function withStorage<C>(
  options: StorageSuiteOptions<C>,
  work: (storage: StorageAdapter, config: C) => Promise<void>,
): Promise<void> {
  const config = await options.config();
  try {
    const storage = createAdapterInstance(options.definition, config, options.context) as StorageAdapter;
    try {
      await work(storage, config);
    } finally {
      await storage.dispose?.();
    }
  } finally {
    await options.cleanup?.(config);
  }
}

/** The declared capabilities of the definition under test. */
export function capabilitiesOf(options: StorageSuiteOptions<unknown>): StorageCapabilities {
  return (options.definition as { capabilities: StorageCapabilities }).capabilities;
}

/** Puts `bytes` deterministic bytes and returns their SHA-256. */
export async function putRandom(storage: StorageAdapter, key: string, bytes: number, seed = key): Promise<string> {
  const result = await storage.put(key, deterministicStream(bytes, { seed }), { size: bytes });
  assert.equal(result.size, bytes, `put("${key}") reported size ${result.size}, expected ${bytes}`);
  return expectedSha256(bytes, seed);
}

/** SHA-256 of the deterministic stream for (bytes, seed), computed by generating it again. */
export async function expectedSha256(bytes: number, seed: string): Promise<string> {
  return (await sha256OfStream(deterministicStream(bytes, { seed }))).sha256;
}

/** Reads an object fully and returns its SHA-256 and length. */
export async function getDigest(storage: StorageAdapter, key: string): Promise<{ sha256: string; bytes: number }> {
  return sha256OfStream(await storage.get(key));
}

/** Collects a listing (test-sized). */
export async function listAll(storage: StorageAdapter, prefix: string): Promise<StorageObjectInfo[]> {
  const entries: StorageObjectInfo[] = [];
  for await (const entry of storage.list(prefix)) entries.push(entry);
  return entries;
}

/** Asserts `promise` rejects with an AdapterError of `code`; `what` names the call in the failure message. */
export async function assertAdapterErrorCode(promise: Promise<unknown>, code: string, what: string): Promise<void> {
  let caught: unknown;
  try {
    const value = await promise;
    (value as Readable | undefined)?.destroy?.();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught !== undefined, `${what} resolved; expected an AdapterError with code ${code}`);
  assert.ok(isAdapterError(caught), `${what} threw ${String(caught)}; expected an AdapterError with code ${code}`);
  assert.equal(caught.code, code, `${what} threw code ${caught.code}; expected ${code}`);
}

/** Asserts the key is invisible: stat and get say NOT_FOUND and no listing entry mentions its name. */
export async function assertInvisible(storage: StorageAdapter, key: string): Promise<void> {
  await assertAdapterErrorCode(storage.stat(key), 'NOT_FOUND', `stat("${key}")`);
  await assertAdapterErrorCode(storage.get(key), 'NOT_FOUND', `get("${key}")`);
  const name = key.slice(key.lastIndexOf('/') + 1);
  const leftovers = (await listAll(storage, '')).filter((entry) => entry.key.includes(name));
  assert.deepEqual(
    leftovers.map((entry) => entry.key),
    [],
    `the listing shows leftovers of the failed put of "${key}" (partial or temporary objects must stay invisible)`,
  );
}
