import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary directory and the function that removes it. */
export interface TempDir {
  path: string;
  remove(): Promise<void>;
}

/** Creates a fresh directory under the OS temp dir; `remove()` deletes it with everything inside. */
export async function makeTempDir(prefix = 'holdfast-testkit-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Runs `work` with a fresh temp dir and removes it afterwards, whatever happened. */
export async function withTempDir<T>(work: (path: string) => Promise<T>, prefix?: string): Promise<T> {
  const dir = await makeTempDir(prefix);
  try {
    return await work(dir.path);
  } finally {
    await dir.remove();
  }
}
