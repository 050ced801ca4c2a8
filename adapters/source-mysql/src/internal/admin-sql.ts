import type { SshTarget } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { quoteIdentifier, withConnection } from './connection.js';
import { remoteQuery } from './remote-query.js';
import type { ClientTools } from './tools.js';

/** Where administrative SQL goes: the server of the config, through the driver or the client on the SSH host. */
export interface AdminTarget {
  config: MysqlSourceConfig;
  ssh: SshTarget | undefined;
  tools: ClientTools;
}

/** A statement delimiter no routine body holds, for the client in SSH mode (bodies contain `;`). */
const DELIMITER = '$$holdfast$$';

/**
 * Runs `statements` one after another in one session (after `USE database` when given) and answers the rows they
 * produce, one statement's after the other's, as text (NULL as ''). One call is one round trip: in SSH mode each
 * call costs an SSH login, so callers batch.
 */
export async function adminQuery(target: AdminTarget, statements: readonly string[], database?: string): Promise<string[][]> {
  const { config, ssh, tools } = target;
  const all = [...(database ? [`USE ${quoteIdentifier(database)}`] : []), ...statements];
  if (ssh) {
    const script = `DELIMITER ${DELIMITER}\n${all.map((statement) => `${statement}${DELIMITER}\n`).join('')}DELIMITER ;\nDO 0`;
    return remoteQuery(config, ssh, tools, script);
  }
  return withConnection(config, async (connection) => {
    const answered: string[][] = [];
    for (const statement of all) {
      const [rows] = await connection.query({ sql: statement, rowsAsArray: true });
      if (!Array.isArray(rows)) continue;
      for (const row of rows as unknown[][]) answered.push(row.map((field) => (field === null || field === undefined ? '' : Buffer.isBuffer(field) ? field.toString('utf8') : String(field))));
    }
    return answered;
  });
}
