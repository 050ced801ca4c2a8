import type { PostgresSourceConfig } from '../config.js';
import type { SshTarget } from '@holdfast/sdk';
import { withClient } from './connection.js';
import { remoteQuery } from './remote-query.js';

/** Where administrative SQL goes: the server of the config, directly or through psql on the SSH host. */
export interface AdminTarget {
  config: PostgresSourceConfig;
  ssh: SshTarget | undefined;
}

/**
 * Runs SQL on `database` and answers the rows of its last statement as text (NULL as ''). Several statements in one
 * call run in one session (a local call sends them as one simple query, SSH mode as one psql script), so a
 * `set_config` is seen by the statements after it. CREATE/DROP DATABASE must be sent alone: a simple query of several
 * statements is one implicit transaction, and those commands refuse to run inside one.
 */
export async function adminQuery(target: AdminTarget, database: string, sql: string): Promise<string[][]> {
  const { config, ssh } = target;
  if (ssh) return remoteQuery(config, ssh, database, sql);
  return withClient(config, database, async (client) => {
    const answered = (await client.query({ text: sql, rowMode: 'array' })) as unknown;
    const results = Array.isArray(answered) ? answered : [answered];
    const last = results.at(-1) as { rows?: unknown[][] } | undefined;
    return (last?.rows ?? []).map((row) => row.map((field) => (field === null || field === undefined ? '' : String(field))));
  });
}
