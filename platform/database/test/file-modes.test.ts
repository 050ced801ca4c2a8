// Regression tests of issue 10.11: the embedded database was world-readable (holdfast.db 0644 in a 0755 folder).
// The data directory is 0700 and every file in it 0600 (the -wal/-shm/-journal siblings too), and an existing file
// that is looser is tightened at start with one warning naming it.
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KernelLogger } from '@holdfast/kernel';
import { openDatabase } from '../src/index.js';
import { notesPlugin } from './fixtures.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

function recordingLogger(): { logger: KernelLogger; warnings: string[] } {
  const warnings: string[] = [];
  const record = (obj: object | string, msg?: string) => void warnings.push(typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj)}`);
  return { warnings, logger: { debug: () => undefined, info: () => undefined, error: () => undefined, warn: record } };
}

describe('regression (issue 10.11): the embedded database and the data directory are private', () => {
  let base: string;

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'holdfast-modes-'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('creates a fresh data dir 0700 with holdfast.db and its siblings 0600', async () => {
    const dataDir = join(base, 'data');
    const db = await openDatabase({ dataDir, plugins: [notesPlugin()] });
    await db.migrate();
    const files = await readdir(dataDir);
    expect(files).toContain('holdfast.db');
    expect(await modeOf(dataDir)).toBe(0o700);
    for (const name of files) expect(await modeOf(join(dataDir, name)), name).toBe(0o600);
    await db.close();
    for (const name of await readdir(dataDir)) expect(await modeOf(join(dataDir, name)), name).toBe(0o600);
  });

  it('warns once, naming the file, when an existing database file is looser, and makes it 0600', async () => {
    const dataDir = join(base, 'data');
    await mkdir(dataDir, { mode: 0o755 });
    await chmod(dataDir, 0o755);
    const first = await openDatabase({ dataDir, plugins: [notesPlugin()] });
    await first.migrate();
    await first.close();
    await chmod(join(dataDir, 'holdfast.db'), 0o644);
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, 'notes.txt'), 'x', { mode: 0o644 });
    const { logger, warnings } = recordingLogger();
    const db = await openDatabase({ dataDir, plugins: [notesPlugin()], logger });
    await db.close();
    const about = (name: string) => warnings.filter((line) => line.includes(join(dataDir, name)));
    expect(about('holdfast.db')).toHaveLength(1);
    expect(about('holdfast.db')[0]).toContain('0644');
    expect(about('notes.txt')).toHaveLength(1);
    expect(warnings.filter((line) => line.includes('Data directory'))).toHaveLength(1);
    expect(await modeOf(join(dataDir, 'holdfast.db'))).toBe(0o600);
    expect(await modeOf(dataDir)).toBe(0o700);
    // A second start has nothing left to warn about.
    const again = recordingLogger();
    await (await openDatabase({ dataDir, plugins: [notesPlugin()], logger: again.logger })).close();
    expect(again.warnings).toEqual([]);
  });
});
