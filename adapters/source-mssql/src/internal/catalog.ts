import { AdapterError, type SourceVersion } from '@holdfast/sdk';
import { ORIGIN } from './origin.js';
import type { MssqlSession } from './session.js';
import { DATABASES_QUERY, VERSION_QUERY } from './statements.js';

/** ProductVersion and Edition of the instance. */
export async function readVersion(session: MssqlSession, signal?: AbortSignal): Promise<SourceVersion> {
  const [row] = await session.query<{ version: unknown; edition: unknown }>(VERSION_QUERY, signal, 'reading the server version');
  const version = typeof row?.version === 'string' ? row.version.trim() : '';
  if (!/^\d+\.\d+/.test(version)) throw new AdapterError(ORIGIN, 'CONFIG', `SQL Server answered an unexpected ProductVersion "${version}"`);
  const edition = typeof row?.edition === 'string' && row.edition.trim() ? row.edition.trim() : undefined;
  return edition ? { version, edition } : { version };
}

/** Major version of a ProductVersion (`16.0.4135.4` -> 16). */
export function majorOf(version: string): number {
  return Number.parseInt(version, 10);
}

/** User databases (sys.databases minus the system ones) with their state. */
export async function readDatabases(session: MssqlSession, signal?: AbortSignal): Promise<Map<string, string>> {
  const rows = await session.query<{ name: unknown; state_desc: unknown }>(DATABASES_QUERY, signal, 'listing databases');
  return new Map(rows.map((row) => [String(row.name), String(row.state_desc ?? 'ONLINE')]));
}
