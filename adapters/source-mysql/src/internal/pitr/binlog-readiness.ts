// `PointInTimeSupport.readiness` of a point-in-time MySQL/MariaDB source: the test-connection check (binlog-check.ts)
// reduced to its sentences, so the catalog can refuse to save a job whose server cannot feed the binary log stream.
import { AdapterError, type PointInTimeReadiness } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { checkBinlog } from './binlog-check.js';

/**
 * Problems (binary logging off, server_id 0, a missing REPLICATION SLAVE or REPLICATION CLIENT, a refused binlog
 * dump, no binlog reader on this host) and warnings (binlog_format, binlog_row_image, a large max_binlog_size).
 * An unreachable server or a refused sign-in rejects as test-connection reports it. The check has its own connect
 * timeouts; `signal` only stops the waiting (it rejects with ABORTED at once).
 */
export async function binlogReadiness(config: MysqlSourceConfig, signal: AbortSignal): Promise<PointInTimeReadiness> {
  const { problems, warnings } = await untilAborted(() => checkBinlog(config), signal);
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
