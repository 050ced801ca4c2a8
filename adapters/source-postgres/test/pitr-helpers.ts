// Shared by the point-in-time recovery tests: the PITR test cluster (127.0.0.1:5433, started by this package's vitest
// globalSetup), source configs for its roles, and a superuser client over the launcher's Unix socket.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { postgresSourceConfig } from '../src/config.js';

export interface PitrState {
  host: string;
  port: number;
  roles: Record<'repl' | 'norepl' | 'replNoHba', { user: string; password: string }>;
}

/** Written by tooling/test-services/postgres-pitr.mjs. */
export const pitr = JSON.parse(readFileSync('/tmp/holdfast-test-services/postgres-pitr/postgres-pitr.json', 'utf8')) as PitrState;

/** Raw (unparsed) physical-mode settings for a role of the cluster. */
export function physicalSettings(role: keyof PitrState['roles'] = 'repl', overrides: Record<string, unknown> = {}) {
  return { host: pitr.host, port: pitr.port, ...pitr.roles[role], mode: 'physical', connectTimeoutSeconds: 5, ...overrides };
}

export function physicalConfig(role: keyof PitrState['roles'] = 'repl', overrides: Record<string, unknown> = {}) {
  return postgresSourceConfig.parse(physicalSettings(role, overrides));
}

/** Runs SQL as the cluster's superuser (trust over the socket in the launcher's state folder). */
export async function superSql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]> {
  const client = new pg.Client({ host: '/tmp/holdfast-test-services/postgres-pitr', port: pitr.port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}
