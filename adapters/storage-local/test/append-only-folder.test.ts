// Issue 45 item 2 (docs/immutability.md): `chattr +a` on a local destination folder is NOT a usable append-only
// pattern. The local destination writes each object to a hidden `.partial` file and renames it into place; an
// append-only folder refuses the rename and the unlink, so the connection test and every put fail. Needs root and a
// file system with the append-only attribute (ext4, xfs, btrfs); skipped with the reason otherwise.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition from '../src/index.js';

const folder = mkdtempSync(join(tmpdir(), 'holdfast-append-only-'));
const chattr = spawnSync('chattr', ['+a', folder], { encoding: 'utf8' });
const isSupported = chattr.status === 0;
const reason = isSupported ? 'chattr +a applied' : `skipped: chattr +a failed here (${(chattr.stderr || chattr.error?.message || 'no output').trim()})`;

afterAll(() => {
  spawnSync('chattr', ['-a', folder]);
  rmSync(folder, { recursive: true, force: true });
});

describe.skipIf(!isSupported)(`local destination in an append-only (chattr +a) folder (${reason})`, () => {
  it('fails the connection test and every put, naming the refused operation: not an append-only pattern for Holdfast', async () => {
    const local = createAdapterInstance<StorageAdapter>(definition, { path: folder });
    const health = await local.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/EPERM: operation not permitted, unlink/);
    const failure = await local.put('x.dump', Readable.from([Buffer.from('backup')])).then(() => undefined, (error: unknown) => error);
    expect(isAdapterError(failure)).toBe(true);
    expect((failure as Error).message).toContain('put of "x.dump" failed');
    expect(existsSync(join(folder, 'x.dump'))).toBe(false);
  });
});
