// The MariaDB PITR test server (127.0.0.1:3307, binary logging on), as tooling/test-services/mariadb-pitr.mjs
// recorded it, and an administrator connection for the tests' own FLUSH/PURGE BINARY LOGS and SET GLOBAL.
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { mysqlSourceConfig, type MysqlSourceConfig } from '../src/config.js';

interface Account {
  user: string;
  password: string;
}

export const pitrServer = JSON.parse(readFileSync('/tmp/holdfast-test-services/mariadb-pitr/mariadb-pitr.json', 'utf8')) as {
  host: string;
  port: number;
  socket: string;
  dataDir: string;
  users: { admin: Account; binlog: Account; noSlave: Account; noRepl: Account };
};

/** A parsed point-in-time config for one of the server's accounts (the replication account by default). */
export function pitrConfig(account: keyof typeof pitrServer.users = 'binlog', overrides: Record<string, unknown> = {}): MysqlSourceConfig {
  const { user, password } = pitrServer.users[account];
  return mysqlSourceConfig.parse({ mode: 'point-in-time', host: pitrServer.host, port: pitrServer.port, user, password, tls: 'disable', ...overrides });
}

/** Runs SQL as the administrator account and returns the rows. */
export async function adminSql<T = Record<string, unknown>>(text: string, values: unknown[] = [], database?: string): Promise<T[]> {
  const { user, password } = pitrServer.users.admin;
  const connection = await mysql.createConnection({ host: pitrServer.host, port: pitrServer.port, user, password, database });
  try {
    const [rows] = await connection.query(text, values);
    return rows as T[];
  } finally {
    await connection.end();
  }
}

/** The server's binary logs, oldest first. */
export async function serverLogs(): Promise<Array<{ name: string; size: number }>> {
  const rows = await adminSql<{ Log_name: string; File_size: number }>('SHOW BINARY LOGS');
  return rows.map((row) => ({ name: row.Log_name, size: Number(row.File_size) }));
}
