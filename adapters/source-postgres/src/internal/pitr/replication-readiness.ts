// `PointInTimeReadiness` of a physical-mode PostgreSQL source: the test-connection replication check
// (replication-check.ts) reduced to its sentences, so the catalog can refuse to save a job whose server cannot feed
// base backups and the WAL stream.
import { readinessFrom, type PointInTimeReadiness } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { checkReplication } from '../replication-check.js';

/**
 * Problems (wal_level, max_wal_senders, max_replication_slots, the REPLICATION privilege, the pg_hba.conf replication
 * line, any other refusal of the replication connection) and warnings (no cap on the WAL a slot holds back). An
 * unreachable server or a refused sign-in rejects as test-connection reports it. The check has its own connect
 * timeouts; `signal` only stops the waiting (it rejects with ABORTED at once).
 */
export function replicationReadiness(config: PostgresSourceConfig, signal: AbortSignal): Promise<PointInTimeReadiness> {
  return readinessFrom(ORIGIN, () => checkReplication(config), signal);
}
