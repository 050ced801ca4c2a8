import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseDumpHeader } from '../src/internal/dump-header.js';
import { encodeFrame, encodePreamble, FrameReader, type FrameType } from '../src/internal/multi-dump-format.js';
import { sql } from './helpers.js';

/** Collects a dump into memory; only for the small test databases here. */
export async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({ write: (chunk, _e, cb) => (chunks.push(chunk), cb()) }));
  return Buffer.concat(chunks);
}

export async function databaseExists(name: string): Promise<boolean> {
  return (await sql('postgres', 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0;
}

export async function roleNames(): Promise<string[]> {
  return (await sql<{ rolname: string }>('postgres', 'SELECT rolname FROM pg_roles')).map((row) => row.rolname);
}

/** What a role's login looks like in the catalogue: attributes and the stored password hash. */
export async function roleAuth(role: string): Promise<Record<string, unknown>> {
  const [row] = await sql('postgres', 'SELECT rolcanlogin, rolsuper, rolcreatedb, rolvaliduntil, rolpassword FROM pg_authid WHERE rolname = $1', [role]);
  if (!row) throw new Error(`role ${role} does not exist`);
  return row;
}

export async function ownerOf(database: string, table: string): Promise<string> {
  const [row] = await sql<{ owner: string }>(database, `SELECT tableowner AS owner FROM pg_tables WHERE schemaname = 'public' AND tablename = $1`, [table]);
  return row!.owner;
}

/**
 * A globals replay recreates every role the server had at backup time; roles of other test files that were dropped
 * since then would come back. This drops the roles that the replay created (named in the globals, absent before
 * the restore), plus `own`.
 */
export async function dropRolesRecreatedBy(backup: Buffer, rolesBefore: string[], own: string[]): Promise<void> {
  const before = new Set(rolesBefore);
  const text = backup.toString('latin1');
  const recreated = (await roleNames()).filter((name) => !before.has(name) && text.includes(`CREATE ROLE ${name};`));
  for (const name of new Set([...recreated, ...own])) {
    await sql('postgres', `DROP OWNED BY "${name}"`).catch(() => undefined);
    await sql('postgres', `DROP ROLE IF EXISTS "${name}"`);
  }
}

/** A copy of a plain dump whose recorded server version has `major` as its major (same length, so offsets hold). */
export function withServerVersion(dump: Buffer, major: string): Buffer {
  const recorded = parseDumpHeader(dump)!.serverVersion!;
  const at = dump.indexOf(Buffer.from(recorded, 'utf8'));
  const current = /^\d+/.exec(recorded)![0];
  if (current.length !== major.length) throw new Error('the replacement major must have as many digits');
  const copy = Buffer.from(dump);
  copy.write(major, at, 'latin1');
  return copy;
}

/** Re-encodes a multi-dump with each frame's payload passed through `change`. */
export function reframe(archive: Buffer, change: (type: FrameType, payload: Buffer) => Buffer): Buffer {
  const reader = new FrameReader();
  const frames = reader.push(archive);
  return Buffer.concat([encodePreamble(reader.version), ...frames.map((frame) => encodeFrame(frame.type, change(frame.type, frame.payload)))]);
}
