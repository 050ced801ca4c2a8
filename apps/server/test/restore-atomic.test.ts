// Issue 41, end to end through the API on the real server (embedded database, local storage, the real directory
// source): failed folder restores leave nothing behind, and hostile archives are contained.
// - Acceptance 2 (folder half): plain and encrypted tar.gz backups and seekable archives, truncated, with one bit
//   flipped, and (plain seekable) with a tampered index offset, are restored into a folder that already holds files.
//   Every run ends Failed, and the folder's tree hash (content, modes, owners, mtimes in nanoseconds, links, the
//   folder's own times) is the one from before; no staging folder is left in it or beside it. The intact backups then
//   restore (merged into the folder, its other files kept).
// - Acceptance 1 through the route: a tar with a relative symlink chain ends Partial, every refused member named in
//   the run's log, nothing created outside the target, no link leading out of it, no setuid bit.
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable } from 'node:stream';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRestoreTarget, folderTreeHash, listTree } from '@holdfast/testkit';
import { creator, settledExecution } from './support/api-steps.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

type Damage = (bytes: Buffer) => Buffer;

const truncate: Damage = (bytes) => bytes.subarray(0, Math.floor(bytes.length * 0.6));
const flipMiddle: Damage = (bytes) => {
  const copy = Buffer.from(bytes);
  const at = Math.floor(copy.length / 2);
  copy[at] = copy[at]! ^ 0x01;
  return copy;
};

describe('folder restores are atomic and contained (issue 41)', () => {
  let server: FullServer;
  let admin: Caller;
  let work: string;
  let storageDir: string;
  let storageId: string;
  let target: string;
  const backups: Record<'tar-plain' | 'tar-encrypted' | 'seekable-plain' | 'seekable-encrypted', string> = {} as never;

  const settled = (executionId: string) => settledExecution(server, admin, executionId, 180_000);
  const restore = async (file: string, extra: Record<string, unknown> = {}) => {
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file, targetPath: target, overwrite: true, ...extra });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return settled(answer.body.executionId);
  };
  const logsOf = (run: { logs?: { message: string }[] }) => (run.logs ?? []).map((entry) => entry.message).join('\n');

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-restore-atomic-'));
    const sourceDir = join(work, 'source');
    storageDir = join(work, 'storage');
    await mkdir(join(sourceDir, 'docs'), { recursive: true });
    await mkdir(storageDir);
    await writeFile(join(sourceDir, 'docs', 'a.txt'), 'new a\n');
    await writeFile(join(sourceDir, 'docs', 'b.bin'), createHash('sha512').update('b').digest().toString('hex').repeat(2000));
    // 1 MiB that does not compress: a truncated backup breaks off inside it, as in the report.
    const big = Buffer.concat(Array.from({ length: 16_384 }, (_, index) => createHash('sha512').update(String(index)).digest()));
    await writeFile(join(sourceDir, 'big.bin'), big);

    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const create = creator(server, () => admin);
    const source = await create('/api/adapters', { name: 'files', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } });
    const storage = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: storageDir } });
    storageId = storage.id;
    const vault = await create('/api/vault', { name: 'atomic key' });
    const variants = [
      ['tar-plain', {}],
      ['tar-encrypted', { encryptionProfileId: vault.id }],
      ['seekable-plain', { archiveFormat: 'SEEKABLE' }],
      ['seekable-encrypted', { archiveFormat: 'SEEKABLE', encryptionProfileId: vault.id }],
    ] as const;
    for (const [name, extra] of variants) {
      const job = await create('/api/jobs', { name, schedule: '0 3 * * *', sourceId: source.id, compression: 'GZIP', destinations: [{ configId: storage.id, priority: 0 }], ...extra });
      const run = await server.call('POST', `/api/jobs/${job.id}/run`, admin, {});
      const backup = await settled(run.body.executionId);
      expect(backup.status, JSON.stringify(backup.logs?.slice(-3))).toBe('Success');
      backups[name] = backup.path;
    }
    expect(backups['tar-encrypted']).toMatch(/\.tar\.gz\.enc$/);
    expect(backups['seekable-encrypted']).toMatch(/\.hfa\.enc$/);

    // The folder restored into already holds things: files the backup also has (other content), others it has not.
    target = join(work, 'restores', 'here');
    await mkdir(join(target, '0-source', 'docs'), { recursive: true });
    await writeFile(join(target, '0-source', 'docs', 'a.txt'), 'old a\n');
    await writeFile(join(target, '0-source', 'big.bin'), 'an older big.bin\n');
    await writeFile(join(target, '0-source', 'mine.txt'), 'not in the backup\n');
    await symlink('0-source/mine.txt', join(target, 'shortcut'));
    await chmod(join(target, '0-source', 'docs'), 0o750);
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    await rm(work, { recursive: true, force: true });
  });

  /** Damages a stored file in place for one restore, then puts the original back. */
  async function withDamaged<T>(key: string, damage: Damage, run: () => Promise<T>): Promise<T> {
    const path = join(storageDir, key);
    const original = await readFile(path);
    await writeFile(path, damage(original));
    try {
      return await run();
    } finally {
      await writeFile(path, original);
    }
  }

  async function expectFailedAndUntouched(label: string, run: () => Promise<{ status: string; logs?: { message: string }[] }>): Promise<void> {
    const before = await folderTreeHash(target);
    const result = await run();
    expect(result.status, `${label}: ${JSON.stringify(result.logs?.slice(-3))}`).toBe('Failed');
    expect(await folderTreeHash(target), `${label}: the target changed`).toBe(before);
    expect((await auditRestoreTarget(target)).stagingLeftovers, label).toEqual([]);
    expect((await readdir(join(work, 'restores'))).sort(), label).toEqual(['here']);
  }

  it('leaves the target byte-identical after truncated and bit-flipped tar.gz backups, plain and encrypted (acceptance 2)', async () => {
    await utimes(target, 1_600_000_000.123456, 1_600_000_000.123456);
    for (const name of ['tar-plain', 'tar-encrypted'] as const) {
      await expectFailedAndUntouched(`${name} truncated`, () => withDamaged(backups[name], truncate, () => restore(backups[name])));
      await expectFailedAndUntouched(`${name} bit flipped`, () => withDamaged(backups[name], flipMiddle, () => restore(backups[name])));
    }
  }, 600_000);

  it('leaves the target byte-identical after damaged seekable archives and a tampered index offset (acceptance 2)', async () => {
    for (const name of ['seekable-plain', 'seekable-encrypted'] as const) {
      await expectFailedAndUntouched(`${name} truncated`, () => withDamaged(backups[name], truncate, () => restore(backups[name])));
      // A byte inside the last member's data (big.bin or b.bin), well before the index and trailer.
      const flipData: Damage = (bytes) => {
        const copy = Buffer.from(bytes);
        const at = Math.floor(copy.length * 0.7);
        copy[at] = copy[at]! ^ 0x01;
        return copy;
      };
      await expectFailedAndUntouched(`${name} data byte flipped`, () => withDamaged(backups[name], flipData, () => restore(backups[name])));
    }
    // The plain archive's index sidecar, rewritten with a checksum that matches: one member's offset moved.
    const indexKey = `${backups['seekable-plain']}.index.json`;
    const tamperOffset: Damage = (bytes) => {
      const text = bytes.toString('utf8');
      const newline = text.indexOf('\n');
      const index = JSON.parse(text.slice(newline + 1)) as { entries: { path: string; offset: number }[] };
      const member = index.entries.find((entry) => entry.path.endsWith('big.bin'))!;
      member.offset += 512;
      const json = JSON.stringify(index);
      return Buffer.from(`${text.slice(0, newline).replace(/sha256=[0-9a-f]{64}/, `sha256=${createHash('sha256').update(json).digest('hex')}`)}\n${json}`);
    };
    await expectFailedAndUntouched('seekable-plain index offset tampered', () => withDamaged(indexKey, tamperOffset, () => restore(backups['seekable-plain'])));
  }, 600_000);

  it('restores the intact backups into the same folder, keeping what the backup does not hold', async () => {
    for (const name of ['tar-encrypted', 'seekable-encrypted'] as const) {
      const result = await restore(backups[name]);
      expect(result.status, `${name}: ${JSON.stringify(result.logs?.slice(-3))}`).toBe('Success');
      expect(await readFile(join(target, '0-source', 'docs', 'a.txt'), 'utf8')).toBe('new a\n');
      expect((await readFile(join(target, '0-source', 'big.bin'))).length).toBe(1024 * 1024);
      expect(await readFile(join(target, '0-source', 'mine.txt'), 'utf8')).toBe('not in the backup\n');
      expect(await readFile(join(target, 'shortcut'), 'utf8')).toBe('not in the backup\n');
      expect((await auditRestoreTarget(target)).stagingLeftovers).toEqual([]);
    }
  }, 300_000);

  it('ends a hostile tar Partial through the route, naming each refused member, with nothing outside (acceptance 1)', async () => {
    const members: tar.Headers[] = [
      { name: '0-source/a/', type: 'directory' },
      { name: '0-source/a/up', type: 'symlink', linkname: '..' },
      { name: '0-source/a/up2', type: 'symlink', linkname: 'up/..' },
      { name: '0-source/a/up3', type: 'symlink', linkname: 'up2/..' },
      { name: '0-source/a/up4', type: 'symlink', linkname: 'up3/..' },
      { name: '0-source/a/up3/made-by-restore/evil.txt', type: 'file', size: 4 },
      { name: '0-source/hl3', type: 'link', linkname: '0-source/a/up3/outside-secret.txt' },
      { name: '0-source/suid', type: 'file', size: 4, mode: 0o4755 },
    ];
    const pack = tar.pack();
    const chunks: Buffer[] = [];
    const reading = (async () => {
      for await (const chunk of pack as unknown as Readable) chunks.push(chunk as Buffer);
    })();
    for (const header of members) pack.entry(header, header.type === 'file' ? 'evil' : undefined);
    pack.finalize();
    await reading;
    const crafted = Buffer.concat(chunks);
    const name = 'hostile.tar';
    const sidecar = JSON.parse(await readFile(join(storageDir, `${backups['tar-plain']}.meta.json`), 'utf8'));
    await writeFile(join(storageDir, name), crafted);
    await writeFile(
      join(storageDir, `${name}.meta.json`),
      JSON.stringify({ ...sidecar, sha256: createHash('sha256').update(crafted).digest('hex'), size: crafted.length, compression: { codec: 'NONE' }, encryption: undefined }),
    );
    await writeFile(join(work, 'restores', 'outside-secret.txt'), 'secret\n');
    const hostileTarget = join(work, 'restores', 'hostile', 'inner');
    const outsideBefore = await listTree(work, (absolute) => absolute === hostileTarget);
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file: name, targetPath: hostileTarget });
    const run = await settled(answer.body.executionId);
    expect(run.status).toBe('Partial');
    // One folder deeper than the chain: `0-source/a/up2` resolves to the target itself, `up3` is the escape.
    for (const refused of ['0-source/a/up3', '0-source/a/up4', '0-source/a/up3/made-by-restore/evil.txt', '0-source/hl3', '0-source/suid']) {
      expect(logsOf(run)).toContain(`restore: ${refused}: `);
    }
    // Only the folder holding the target is new outside it (the restore creates a missing target with its parents).
    const outsideAfter = await listTree(work, (absolute) => absolute === hostileTarget);
    expect(outsideAfter.filter((path) => !outsideBefore.includes(path))).toEqual(['restores/hostile']);
    expect(outsideBefore.filter((path) => !outsideAfter.includes(path))).toEqual([]);
    expect(await auditRestoreTarget(hostileTarget, [work])).toEqual({ linksLeadingOutside: [], hardLinksToOutside: [], specialModes: [], stagingLeftovers: [] });
  }, 300_000);
});
