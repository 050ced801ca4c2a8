// Helpers of the tests of work done in child processes (external compressors and decoders, the directory source's
// own writer and extractor): what a folder holds, which of those processes still run, and the environment they read.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach } from 'vitest';

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Every file below `root` (relative path -> SHA-256 of its bytes). */
export async function filesOf(root: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    found[relative(root, path)] = sha256(await readFile(path));
  }
  return found;
}

/** Process ids whose command line matches `pattern` (pgrep -f). */
export function processesMatching(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Puts PATH and HOLDFAST_EXTERNAL_COMPRESSOR back as they were after each test (tests change both). */
export function restoreCompressorEnvironmentAfterEach(): void {
  const savedPath = process.env.PATH;
  const savedSwitch = process.env.HOLDFAST_EXTERNAL_COMPRESSOR;
  afterEach(() => {
    process.env.PATH = savedPath;
    if (savedSwitch === undefined) delete process.env.HOLDFAST_EXTERNAL_COMPRESSOR;
    else process.env.HOLDFAST_EXTERNAL_COMPRESSOR = savedSwitch;
  });
}
