// A partial copy can be behind the server's position read just before it: the long-running reader lags (a busy
// network, a burst of writes), or writes through a stdio buffer (mariadb-binlog --raw uses my_fwrite and never asks
// for a flush; MariaDB 10.11.19's build was measured current after every commit, other builds may not be). Then the
// bytes the server has beyond the copy's last whole event are fetched with a short, non-blocking read of that one
// file from exactly that position, and appended to the copy (never to the file the long-running reader writes).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { MysqlSourceConfig } from '../../config.js';
import { writeOptionsFile } from '../tools.js';
import { binlogConnectionArgs, type BinlogTool } from './binlog-tool.js';

const HEADER_BYTES = 19;
/** Events the server makes up for a reader (the format description it sends first when starting past byte 4). */
const ARTIFICIAL_FLAG = 0x20;

/** What a top-up added to a copy: bytes and the newest event time among them. */
export interface TopUp {
  bytes: number;
  newestSeconds: number;
}

/**
 * Appends to `copy` (which ends at byte `end` of `name`, after a whole event) the server's events of `name` from
 * `end` on. Only events whose place in the server's file follows on exactly are taken, so the copy stays the
 * server's bytes; anything else (the made-up format description, a cut last event) is left out. Never throws: a
 * failed top-up only means the copy is reported as it is.
 */
export async function topUpCopy(config: MysqlSourceConfig, tool: BinlogTool, workDir: string, name: string, end: number, copy: string): Promise<TopUp> {
  const none = { bytes: 0, newestSeconds: 0 };
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const options = await writeOptionsFile(config);
  try {
    const args = [...options.args, ...binlogConnectionArgs(config, tool), '--read-from-remote-server', '--raw', `--start-position=${end}`, `--result-file=${workDir}/`, name];
    const child = spawn(tool.command, args, { env: { PATH: process.env.PATH, LANG: 'C.UTF-8' }, stdio: ['ignore', 'ignore', 'ignore'], timeout: (config.connectTimeoutSeconds + 20) * 1000 });
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) return none;
    const fetched = await readFile(path.join(workDir, name)).catch(() => undefined);
    if (!fetched) return none;
    const { from, to, newestSeconds } = followingEvents(fetched, end);
    if (to <= from) return none;
    await appendFile(copy, fetched.subarray(from, to));
    return { bytes: to - from, newestSeconds };
  } catch {
    return none;
  } finally {
    await options.remove();
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * The byte range of `fetched` (a raw file written from position `end`: magic bytes, a made-up format description,
 * then the server's events) whose events continue the server's file exactly at `end`: each event's end position
 * (header bytes 13-16) minus its length must be where the previous one ended.
 */
export function followingEvents(fetched: Buffer, end: number): { from: number; to: number; newestSeconds: number } {
  let offset = 4;
  let from = -1;
  let expected = end;
  let newestSeconds = 0;
  while (offset + HEADER_BYTES <= fetched.length) {
    const length = fetched.readUInt32LE(offset + 9);
    const nextPosition = fetched.readUInt32LE(offset + 13);
    const flags = fetched.readUInt16LE(offset + 17);
    if (length < HEADER_BYTES || offset + length > fetched.length) break;
    const isArtificial = (flags & ARTIFICIAL_FLAG) !== 0 || nextPosition === 0;
    if (!isArtificial && nextPosition - length === expected) {
      if (from < 0) from = offset;
      expected = nextPosition;
      newestSeconds = Math.max(newestSeconds, fetched.readUInt32LE(offset));
    } else if (from >= 0) {
      break; // the chain ended (a rotation to another file, or anything unexpected): keep what followed on
    }
    offset += length;
  }
  return from < 0 ? { from: 0, to: 0, newestSeconds: 0 } : { from, to: from + (expected - end), newestSeconds };
}
