// `PointInTimeReadiness` of a physical-mode PostgreSQL source: the test-connection replication check
// (replication-check.ts) reduced to its sentences, so the catalog can refuse to save a job whose server cannot feed
// base backups and the WAL stream.
import { AdapterError, type PointInTimeReadiness } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { checkReplication } from '../replication-check.js';

/**
 * Problems (wal_level, max_wal_senders, max_replication_slots, the REPLICATION privilege, the pg_hba.conf replication
 * line, any other refusal of the replication connection) and warnings (no cap on the WAL a slot holds back). An
 * unreachable server or a refused sign-in rejects as test-connection reports it. The check has its own connect
 * timeouts; `signal` only stops the waiting (it rejects with ABORTED at once).
 */
export async function replicationReadiness(config: PostgresSourceConfig, signal: AbortSignal): Promise<PointInTimeReadiness> {
  const { problems, warnings } = await untilAborted(() => checkReplication(config), signal);
  return { problems, warnings };
}

/** Starts `work` unless `signal` already aborted; rejects with ABORTED as soon as it aborts (the work runs on). */
function untilAborted<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
  const aborted = () => new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time readiness check was stopped before the server answered');
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}
