// Where the WAL of a partial segment ends (wal-end.ts), checked against PostgreSQL's own reader: pg_receivewal streams
// real WAL from the PITR test cluster, and pg_waldump says where the valid records of each copy stop. Other test files
// write to the same cluster meanwhile, so the copies hold their WAL too; the oracle reads the same bytes.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walDataEnd } from '../src/internal/pitr/wal-end.js';
import { parseLsn, segmentStartLsn } from '../src/internal/pitr/wal-names.js';
import { pitr, superSql } from './pitr-helpers.js';

const SEGMENT_SIZE = 16 * 1024 * 1024;

/** pg_waldump ships with the server, not on PATH: the one of the newest installed major version. */
function findWaldump(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((name) => existsSync(path.join(root, name, 'bin', 'pg_waldump'))) : [];
  const newest = majors.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error('pg_waldump was not found under /usr/lib/postgresql/*/bin (npm run test:services installs the server)');
  return path.join(root, newest, 'bin', 'pg_waldump');
}

/**
 * pg_waldump's verdict on a segment file: where the first record it cannot read starts, as a file offset. Its last
 * line reads "error in WAL record at <last good record>: <why> ... at <where the bad one starts>" for a record that is
 * missing ("invalid record length at Y"), torn ("incorrect prev-link A at Y") or corrupt ("checksum in record at Y").
 * Undefined when it stopped at a page instead (a record continued onto a page the copy does not hold yet), or the copy
 * is of a segment whose first page has not arrived: the caller takes another copy.
 */
function waldumpEnd(waldump: string, dir: string, name: string): number | undefined {
  const result = spawnSync(waldump, ['-p', dir, name], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  // A segment pg_receivewal has just created (another file switched the WAL) is all zeros until its first page
  // arrives: pg_waldump cannot even read its header. No verdict yet; the caller takes another copy.
  if (/header specifies 0 bytes/.test(result.stderr)) return undefined;
  const line = result.stderr.split('\n').find((text) => text.includes('error in WAL record at'));
  if (!line) throw new Error(`pg_waldump gave no verdict for ${name}: ${result.stderr.slice(0, 500)}`);
  const why = line.slice(line.indexOf(': ', line.indexOf('error in WAL record at')) + 2);
  if (/magic number|pageaddr|contrecord/.test(why)) return undefined;
  const lsn = [...why.matchAll(/([0-9A-F]+\/[0-9A-F]+)/g)].at(-1)?.[1];
  if (!lsn) throw new Error(`pg_waldump's verdict names no position: ${line}`);
  return Number(parseLsn(lsn) - segmentStartLsn(name, SEGMENT_SIZE));
}

/** The start of the last valid record pg_waldump lists (a file offset). */
function lastRecordStart(waldump: string, dir: string, name: string): number {
  const result = spawnSync(waldump, ['-p', dir, name], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const starts = [...result.stdout.matchAll(/lsn: (\w+\/\w+)/g)].map((match) => match[1]!);
  if (starts.length === 0) throw new Error(`pg_waldump listed no record in ${name}: ${result.stderr.slice(0, 300)}`);
  return Number(parseLsn(starts.at(-1)!) - segmentStartLsn(name, SEGMENT_SIZE));
}

describe('the end of the WAL in a copy of a partial segment (real pg_receivewal, pg_waldump as the oracle)', () => {
  const waldump = findWaldump();
  let receiveDir: string;
  let workDir: string;
  let receiver: ReturnType<typeof spawn> | undefined;

  beforeAll(async () => {
    receiveDir = await mkdtemp(path.join(tmpdir(), 'hf-wal-end-receive-'));
    workDir = await mkdtemp(path.join(tmpdir(), 'hf-wal-end-copies-'));
    // The cluster's one replication line admits holdfast_repl over TCP (no slot: the stream starts at the current segment).
    receiver = spawn('pg_receivewal', ['-D', receiveDir, '-h', pitr.host, '-p', String(pitr.port), '-U', pitr.roles.repl.user, '--no-loop', '--no-password'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PGPASSWORD: pitr.roles.repl.password },
    });
    const deadline = Date.now() + 20_000;
    while (!(await readdir(receiveDir)).some((name) => name.endsWith('.partial'))) {
      if (Date.now() > deadline) throw new Error('pg_receivewal wrote no partial segment within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    receiver?.kill('SIGTERM');
    await rm(receiveDir, { recursive: true, force: true });
    await rm(workDir, { recursive: true, force: true });
  });

  /**
   * A copy of the newest segment file pg_receivewal holds (partial or, when others switched WAL, complete). A segment
   * it has just created is all zeros until its first page arrives (other test files switch the WAL): such a copy is
   * taken again, so every copy has at least its first page header.
   */
  async function copyNewest(label: string): Promise<{ dir: string; name: string; file: string; size: number; startLsn: bigint }> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const newest = (await readdir(receiveDir)).filter((name) => /^[0-9A-F]{24}(\.partial)?$/.test(name)).sort().at(-1)!;
      const name = newest.replace('.partial', '');
      const dir = path.join(workDir, label);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
      const file = path.join(dir, name);
      await copyFile(path.join(receiveDir, newest), file);
      const header = (await readFile(file)).subarray(0, 8);
      if (header.some((byte) => byte !== 0) || Date.now() > deadline) return { dir, name, file, size: (await stat(file)).size, startLsn: segmentStartLsn(name, SEGMENT_SIZE) };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('ends where pg_waldump stops, after a record whose last bytes are zeros (the last non-zero byte would be early)', async () => {
    // A logical message of zero bytes: the record ends in 64 zero bytes. Emitted last; waited for until received.
    const [row] = await superSql<{ end: string }>("SELECT pg_logical_emit_message(false, 'holdfast-wal-end', decode(repeat('00', 64), 'hex'))::text AS end");
    const messageEnd = parseLsn(row!.end);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const copy = await copyNewest('zeros');
      const end = await walDataEnd(copy.file, copy.size, copy.startLsn);
      const oracle = waldumpEnd(waldump, copy.dir, copy.name);
      if (copy.startLsn + BigInt(end) >= messageEnd && oracle !== undefined) {
        expect(end).toBe(oracle);
        expect(end % 8).toBe(0);
        // When nothing was written after the message (other files may write), the zeros fool the old estimate.
        if (copy.startLsn + BigInt(end) === messageEnd) expect(await lastNonZeroAligned(copy.file)).toBeLessThan(end);
        console.log(`wal-end: message end ${copy.startLsn + BigInt(end) === messageEnd ? 'is' : 'is not'} the copy's end; last non-zero estimate ${await lastNonZeroAligned(copy.file)}, exact ${end}`);
        return;
      }
      if (Date.now() > deadline) throw new Error(`no copy reached the message's end ${row!.end} (last: ${end}, pg_waldump ${oracle})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('stops before a record caught half written, as pg_waldump does', async () => {
    await superSql("SELECT pg_logical_emit_message(true, 'holdfast-wal-end', 'a transactional message')");
    const copy = await copyNewest('torn');
    const end = await walDataEnd(copy.file, copy.size, copy.startLsn);
    const lastStart = lastRecordStart(waldump, copy.dir, copy.name);
    expect(end).toBeGreaterThan(lastStart);
    // Everything after the last record's length field is zeros: its header and data are still to come.
    const bytes = await readFile(copy.file);
    bytes.fill(0, lastStart + 4, end);
    await writeFile(copy.file, bytes);
    expect(await walDataEnd(copy.file, copy.size, copy.startLsn)).toBe(lastStart);
    expect(waldumpEnd(waldump, copy.dir, copy.name)).toBe(lastStart);
    // One flipped data byte instead: the checksum catches it.
    const flipped = await copyNewest('flipped');
    const flippedBytes = await readFile(flipped.file);
    const flippedEnd = await walDataEnd(flipped.file, flipped.size, flipped.startLsn);
    const flippedLast = lastRecordStart(waldump, flipped.dir, flipped.name);
    flippedBytes[flippedLast + 24] = flippedBytes[flippedLast + 24]! ^ 0xff;
    await writeFile(flipped.file, flippedBytes);
    expect(await walDataEnd(flipped.file, flipped.size, flipped.startLsn)).toBe(flippedLast);
    expect(waldumpEnd(waldump, flipped.dir, flipped.name)).toBe(flippedLast);
    expect(flippedEnd).toBeGreaterThan(flippedLast);
  });

  it('holds nothing for a file that is not the named segment, or of zeros only', async () => {
    const copy = await copyNewest('misnamed');
    const end = await walDataEnd(copy.file, copy.size, copy.startLsn);
    expect(end).toBeGreaterThan(0);
    expect(await walDataEnd(copy.file, copy.size, copy.startLsn + BigInt(SEGMENT_SIZE))).toBe(0);
    const zeros = path.join(workDir, 'zeros.bin');
    await writeFile(zeros, Buffer.alloc(64 * 1024));
    expect(await walDataEnd(zeros, 64 * 1024, copy.startLsn)).toBe(0);
  });
});

/** The estimate the stream used before wal-end.ts: the last non-zero byte, rounded up to 8. */
async function lastNonZeroAligned(file: string): Promise<number> {
  return Math.ceil((await lastNonZero(file)) / 8) * 8;
}

async function lastNonZero(file: string): Promise<number> {
  const bytes = await readFile(file);
  for (let i = bytes.length - 1; i >= 0; i--) if (bytes[i] !== 0) return i + 1;
  return 0;
}
