import { setTimeout as sleep } from 'node:timers/promises';
import type { PostgresSourceConfig } from '../../config.js';
import type { RecoveryServer } from './restore-server.js';

/**
 * Asks the restored server itself whether it left recovery, over its private socket (trust there). The copy has the
 * source's roles, so the source's role is tried first, then `postgres`. Returns null when it answers "promoted",
 * else the reason it could not be confirmed (reported as a warning: the log already showed the promotion).
 */
export async function confirmPromoted(config: PostgresSourceConfig, server: RecoveryServer, signal: AbortSignal): Promise<string | null> {
  const { default: driver } = await import('pg');
  const logins = [...new Set([config.user, 'postgres'])].map((user) => ({ user, database: config.maintenanceDatabase }));
  let lastProblem = 'no login tried';
  for (let attempt = 0; attempt < 20 && !signal.aborted; attempt += 1) {
    for (const login of logins) {
      const client = new driver.Client({ host: server.runDir, port: server.port, ...login, connectionTimeoutMillis: 5000, application_name: 'holdfast-restore' });
      client.on('error', () => undefined);
      try {
        await client.connect();
        const { rows } = await client.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering');
        if (rows[0]?.recovering === false) return null;
        lastProblem = 'the server still reports pg_is_in_recovery() = true';
      } catch (error) {
        lastProblem = `logging in as ${login.user} failed: ${(error as Error).message}`;
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    await sleep(250, undefined, { signal }).catch(() => undefined);
  }
  return `the restored server could not confirm it left recovery (${lastProblem})`;
}
