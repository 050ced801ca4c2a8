import type pg from 'pg';
import type { PostgresSourceConfig } from '../config.js';

/**
 * Driver options of a physical replication connection (the kind pg_basebackup and pg_receivewal open): the replication
 * check and the few replication commands Holdfast sends itself use the same ones.
 */
export function replicationClientOptions(config: PostgresSourceConfig): pg.ClientConfig & { replication: string } {
  return {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password ?? '',
    database: config.maintenanceDatabase,
    connectionTimeoutMillis: config.connectTimeoutSeconds * 1000,
    ssl: config.sslMode === 'disable' || config.sslMode === 'prefer' ? false : { rejectUnauthorized: config.sslMode === 'verify-full' },
    application_name: 'holdfast',
    // The driver sends `replication` in the startup packet; its type declarations do not list the option.
    replication: 'true',
  };
}
