// What the recovery kit tests share: a kit built into a temp folder for the test file, the kit's `extract` run as a
// child process, temp folders removed after all tests, and archives written as Holdfast stores them.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll } from 'vitest';
import { createArchiveWriter, type ArchiveIndex, type ArchiveWriter, type ArchiveWriterOptions } from '@holdfast/archive';
import { createEncryptStream } from '../../src/codec/encryption/encrypt-stream.js';
import { buildRecoveryKit } from '../../src/codec/recovery-kit.js';
import { makeTempDir, runThrough } from './helpers.js';

/** How a kit command ended. */
export interface KitRun {
  code: number | null;
  stderr: string;
}

/** The recovery kit of one test file (see {@link useRecoveryKit}). */
export interface RecoveryKitUnderTest {
  /** The folder the kit was written to (set once beforeAll ran). */
  readonly dir: string;
  /** `--key-file <the kit's key file>`. */
  keyArgs(): string[];
  /** A fresh temp folder, removed after all tests of the file. */
  tempDir(): Promise<string>;
  /** `node holdfast-decrypt.mjs extract ...` in `cwd`, with only PATH (and what the test adds) in the environment. */
  extract(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<KitRun>;
}

/** Builds the recovery kit for `key` before the file's tests and removes it, and every {@link RecoveryKitUnderTest.tempDir}, after them. */
export function useRecoveryKit(key: Buffer): RecoveryKitUnderTest {
  const cleanups: (() => Promise<void>)[] = [];
  let kitDir = '';
  beforeAll(async () => {
    const kit = await makeTempDir();
    cleanups.push(kit.remove);
    kitDir = kit.path;
    for (const file of await buildRecoveryKit({ key })) await writeFile(join(kitDir, file.name), file.content, { mode: file.mode });
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  return {
    get dir() {
      return kitDir;
    },
    keyArgs: () => ['--key-file', join(kitDir, 'holdfast-key.txt')],
    async tempDir() {
      const dir = await makeTempDir();
      cleanups.push(dir.remove);
      return dir.path;
    },
    extract: (cwd, args, env = {}) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [join(kitDir, 'holdfast-decrypt.mjs'), 'extract', ...args], {
          cwd,
          env: { PATH: process.env.PATH, ...env },
          stdio: ['ignore', 'ignore', 'pipe'],
          signal: AbortSignal.timeout(60_000),
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      }),
  };
}

/** Where and how {@link writeKitArchive} writes an archive. */
export interface KitArchiveTarget {
  file: string;
  options: ArchiveWriterOptions;
  isEncrypted: boolean;
  /** HFENC chunk size; odd sizes put member boundaries inside records. */
  encryptionChunkSize?: number;
  hasIndexSidecar: boolean;
}

/** Writes an archive as Holdfast stores it: `<name>.hfa[.enc]`, plus `<name>.hfa[.enc].index.json` when asked (encrypted with `key`). */
export async function writeKitArchive(key: Buffer, target: KitArchiveTarget, fill: (writer: ArchiveWriter) => Promise<unknown>): Promise<ArchiveIndex> {
  const writer = createArchiveWriter(target.options);
  const written = target.isEncrypted
    ? pipeline(writer, createEncryptStream({ key, chunkSize: target.encryptionChunkSize }), createWriteStream(target.file))
    : pipeline(writer, createWriteStream(target.file));
  const finished = (async () => {
    await fill(writer);
    return writer.finish();
  })();
  const [result] = await Promise.all([finished, written]);
  if (target.hasIndexSidecar) {
    const indexFile = Buffer.concat([...result.indexFile.chunks()]);
    const sidecar = target.isEncrypted ? await runThrough(createEncryptStream({ key }), indexFile) : indexFile;
    await writeFile(`${target.file}.index.json`, sidecar);
  }
  return result.index;
}
