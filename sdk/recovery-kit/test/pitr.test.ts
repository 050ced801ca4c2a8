// The kit's point-in-time restore without a database: WAL naming and the choice of pieces (partials, gaps), the tar
// unpacker's containment, target parsing, and the `pitr` command's refusals on a hand-made base backup and WAL whose
// headers carry what the script reads (system identifier, segment size). The restore against a real base backup,
// WAL written by the engine and a real PostgreSQL is plugins/engine/test/codec/recovery-kit-pitr.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';

// The kit is plain JavaScript without type declarations: loaded by URL, so the type check leaves it alone.
const kitUrl = (name: string) => new URL(`../kit/${name}`, import.meta.url).href;
const wal = await import(kitUrl('pitr-wal.mjs'));
const settings = await import(kitUrl('pitr-settings.mjs'));
const tar = await import(kitUrl('tar-unpack.mjs'));
const script = new URL('../kit/holdfast-decrypt.mjs', import.meta.url).pathname;
const SEGMENT = 16 * 1024 * 1024;

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hf-kit-pitr-unit-'));
  temps.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

/** One ustar header block (plus data, padded) for a hand-made tar. */
function tarMember(name: string, type: '0' | '5' | '2', data = Buffer.alloc(0), linkTarget = ''): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'utf8');
  header.write('0000644\0', 100, 'ascii');
  header.write('0000000\0', 108, 'ascii');
  header.write('0000000\0', 116, 'ascii');
  header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  header.write('00000000000\0', 136, 'ascii');
  header.write(type, 156, 'ascii');
  header.write(linkTarget, 157, 'utf8');
  header.write('ustar\0', 257, 'ascii');
  header.write('00', 263, 'ascii');
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return Buffer.concat([header, data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

const tarOf = (...members: Buffer[]) => Buffer.concat([...members, Buffer.alloc(1024)]);

/** A WAL segment as far as the script reads it: the long page header's flag, system identifier and segment size. */
function segment(systemId: bigint): Buffer {
  const bytes = Buffer.alloc(SEGMENT);
  bytes.writeUInt16LE(0xd110, 0);
  bytes.writeUInt16LE(0x0002, 2);
  bytes.writeBigUInt64LE(systemId, 24);
  bytes.writeUInt32LE(SEGMENT, 32);
  return bytes;
}

const SYSTEM = 7_444_000_111_222_333_444n;

/** A hand-made plain (unencrypted, uncompressed) base backup: backup_label, PG_VERSION, pg_control's system id. */
function baseTar(systemId = SYSTEM): Buffer {
  const control = Buffer.alloc(8192);
  control.writeBigUInt64LE(systemId, 0);
  const label = 'START WAL LOCATION: 0/2000028 (file 000000010000000000000002)\nSTART TIME: 2026-12-06 10:00:00 UTC\nSTART TIMELINE: 1\n';
  return tarOf(
    tarMember('PG_VERSION', '0', Buffer.from('15\n')),
    tarMember('backup_label', '0', Buffer.from(label)),
    tarMember('global/', '5'),
    tarMember('global/pg_control', '0', control),
    tarMember('postgresql.conf', '0', Buffer.from("port = 5433\ninclude 'gone.conf'\n")),
  );
}

function runKit(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { cwd, env: { PATH: process.env.PATH }, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('WAL names and the choice of pieces', () => {
  it('counts segments across a log id: 16 MiB segments roll over after FF, 64 MiB ones after 3F', () => {
    const names16 = new wal.WalNames(SEGMENT);
    expect(names16.name(1, names16.sequence('0000000100000003000000FF') + 1)).toBe('000000010000000400000000');
    const names64 = new wal.WalNames(64 * 1024 * 1024);
    expect(names64.name(2, names64.sequence('000000020000000A0000003F') + 1)).toBe('000000020000000B00000000');
    expect(names64.sequence('000000020000000A00000040')).toBeNull();
    expect(names16.sequenceOfPosition('0/3000028')).toBe(3);
  });

  const names = new wal.WalNames(SEGMENT);
  const plan = (pieces: Record<string, { complete?: string; partial?: string }>, lastSequence?: number) =>
    wal.planWal(new Map(Object.entries(pieces)), { startSegment: '000000010000000000000002', timeline: 1, names, lastSequence });

  it('takes the completed segment over a partial of the same name, and a partial only as the newest piece', () => {
    const chosen = plan({
      '000000010000000000000001': { complete: 'old' },
      '000000010000000000000002': { complete: 'c2', partial: 'p2' },
      '000000010000000000000003': { complete: 'c3' },
      '000000010000000000000004': { partial: 'p4' },
    });
    expect(chosen).toEqual([
      { name: '000000010000000000000002', path: 'c2', partial: false },
      { name: '000000010000000000000003', path: 'c3', partial: false },
      { name: '000000010000000000000004', path: 'p4', partial: true },
    ]);
    expect(plan({ '000000010000000000000002': { complete: 'c2' }, '000000010000000000000003': { complete: 'c3' } }, 2)).toHaveLength(1);
  });

  it('refuses a missing start segment, a gap, and a partial that is not the newest piece (exit code 9)', () => {
    const failure = (pieces: Record<string, { complete?: string; partial?: string }>) => {
      try {
        plan(pieces);
      } catch (error) {
        return error as { exitCode: number; message: string };
      }
      throw new Error('no refusal');
    };
    expect(failure({ '000000010000000000000003': { complete: 'c3' } })).toMatchObject({ exitCode: 9, message: expect.stringContaining('000000010000000000000002, where the base backup starts') });
    expect(failure({ '000000010000000000000002': { complete: 'c2' }, '000000010000000000000004': { complete: 'c4' } })).toMatchObject({ exitCode: 9, message: expect.stringContaining(': 000000010000000000000003.') });
    expect(failure({ '000000010000000000000002': { complete: 'c2' }, '000000010000000000000003': { partial: 'p3' }, '000000010000000000000004': { complete: 'c4' } }).message).toContain('000000010000000000000003 (only its partial is here');
  });
});

describe('target parsing', () => {
  it('takes a time only with its offset, and exactly one target', () => {
    expect(settings.parseTarget({ 'target-time': '2026-12-06T14:03:27.250+01:00' })).toEqual({ type: 'time', time: new Date('2026-12-06T13:03:27.250Z') });
    expect(settings.parseTarget({ 'target-lsn': '0/3000a28' })).toEqual({ type: 'position', position: '0/3000A28' });
    expect(() => settings.parseTarget({ 'target-time': '2026-12-06T14:03:27' })).toThrow(/with its offset/);
    expect(() => settings.parseTarget({ latest: true, 'target-name': 'x' })).toThrow(/exactly one target/);
    expect(() => settings.parseTarget({ 'target-lsn': '3000028' })).toThrow(/WAL position/);
  });
});

describe('the base backup tar', () => {
  it('writes folders 0700 and files 0600, leaves links out with a warning', async () => {
    const root = await tempDir();
    const { counts, warnings } = await tar.unpackTar(Readable.from([tarOf(tarMember('base/', '5'), tarMember('base/1/1259', '0', Buffer.from('heap')), tarMember('pg_tblspc/16400', '2', Buffer.alloc(0), '/mnt/ts'))]), root);
    expect(counts).toEqual({ files: 1, directories: 1, bytes: 4 });
    expect(warnings).toEqual(['pg_tblspc/16400: left out, it is a symlink (tablespaces are not supported)']);
    expect(await readFile(join(root, 'base/1/1259'), 'utf8')).toBe('heap');
    expect((await stat(join(root, 'base/1/1259'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(root, 'base'))).mode & 0o777).toBe(0o700);
    expect(existsSync(join(root, 'pg_tblspc/16400'))).toBe(false);
  });

  it('refuses a member that leads out of the data directory, and a damaged header', async () => {
    const root = await tempDir();
    await expect(tar.unpackTar(Readable.from([tarOf(tarMember('../escape', '0', Buffer.from('x')))]), root)).rejects.toMatchObject({ exitCode: 4, message: expect.stringContaining('unsafe path') });
    expect(existsSync(join(root, '..', 'escape'))).toBe(false);
    const damaged = tarOf(tarMember('PG_VERSION', '0', Buffer.from('15\n')));
    damaged[10] = damaged[10]! ^ 0xff;
    await expect(tar.unpackTar(Readable.from([damaged]), await tempDir())).rejects.toMatchObject({ exitCode: 4, message: expect.stringContaining('checksum') });
  });
});

describe('the pitr command on a hand-made base and WAL', () => {
  async function setUp(options: { sidecar?: object; segments?: Record<string, Buffer> } = {}) {
    const dir = await tempDir();
    await writeFile(join(dir, 'db_2026-12-06.tar'), baseTar());
    if (options.sidecar) await writeFile(join(dir, 'db_2026-12-06.tar.meta.json'), JSON.stringify(options.sidecar));
    await mkdir(join(dir, 'wal', '00000001'), { recursive: true });
    const segments = options.segments ?? { '000000010000000000000002': segment(SYSTEM), '000000010000000000000003.partial': segment(SYSTEM) };
    for (const [name, bytes] of Object.entries(segments)) await writeFile(join(dir, 'wal', '00000001', name), bytes);
    return dir;
  }
  const common = ['pitr', '--base', 'db_2026-12-06.tar', '--wal', 'wal'];

  it('prepares the data directory for --latest: WAL restored under segment names, recovery settings, commented include', async () => {
    const dir = await setUp();
    const result = runKit([...common, '--latest', '--out', 'restored', '--pg-bin', join(dir, 'no-such-bin')], dir);
    expect(result.code, result.stderr).toBe(0);
    expect(await readdir(join(dir, 'restored', 'holdfast-restore-wal'))).toEqual(['000000010000000000000002', '000000010000000000000003']);
    const auto = await readFile(join(dir, 'restored', 'postgresql.auto.conf'), 'utf8');
    expect(auto).toContain(`restore_command = 'cp "holdfast-restore-wal/%f" "%p"'`);
    expect(auto).toContain("recovery_target_action = 'promote'");
    expect(auto).not.toMatch(/recovery_target_(time|lsn|name) =/);
    expect(existsSync(join(dir, 'restored', 'recovery.signal'))).toBe(true);
    expect(await readFile(join(dir, 'restored', 'postgresql.conf'), 'utf8')).toContain("# holdfast recovery kit: include 'gone.conf'");
    expect((await stat(join(dir, 'restored'))).mode & 0o777).toBe(0o700);
    expect(result.stdout).toContain(`-D ${join(dir, 'restored')} -l ${join(dir, 'restored', 'holdfast-restore.log')} start`);
  });

  it('refuses with its exit code and leaves nothing: non-empty output, before the base, a gap, WAL of another server', async () => {
    const dir = await setUp({ sidecar: { compression: { codec: 'NONE' }, pointInTime: { startSegment: '000000010000000000000002', consistentAt: '2026-12-06T10:00:05.000Z', stopPosition: '0/2000100' } } });
    await mkdir(join(dir, 'occupied'));
    await writeFile(join(dir, 'occupied', 'keep'), 'x');
    expect(runKit([...common, '--latest', '--out', 'occupied'], dir).code).toBe(6);
    const early = runKit([...common, '--target-time', '2026-12-06T11:00:04+01:00', '--out', 'early'], dir);
    expect(early.code).toBe(8);
    expect(early.stderr).toContain('is before this base backup is consistent (2026-12-06T10:00:05.000Z)');
    expect(runKit([...common, '--target-lsn', '0/2000000', '--out', 'early-lsn'], dir).code).toBe(8);
    const late = runKit([...common, '--target-lsn', '0/9000000', '--out', 'late-lsn'], dir);
    expect(late.code).toBe(8);
    expect(late.stderr).toContain('lies after the archived WAL');

    const gap = await setUp({ segments: { '000000010000000000000002': segment(SYSTEM), '000000010000000000000004': segment(SYSTEM) } });
    const gapped = runKit([...common, '--latest', '--out', 'restored'], gap);
    expect(gapped.code).toBe(9);
    expect(gapped.stderr).toContain('WAL is missing between 000000010000000000000002 and 000000010000000000000004: 000000010000000000000003');

    const foreign = await setUp({ segments: { '000000010000000000000002': segment(SYSTEM + 1n) } });
    const refused = runKit([...common, '--latest', '--out', 'restored'], foreign);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('is from another server');

    for (const [folder, names] of [[dir, ['occupied', 'early', 'early-lsn', 'late-lsn']], [gap, ['restored']], [foreign, ['restored']]] as const) {
      for (const name of names) expect(existsSync(join(folder, `${name}.partial`)), name).toBe(false);
      for (const name of names.filter((name) => name !== 'occupied')) expect(existsSync(join(folder, name)), name).toBe(false);
    }
    expect(await readdir(join(dir, 'occupied'))).toEqual(['keep']);
  });
});
