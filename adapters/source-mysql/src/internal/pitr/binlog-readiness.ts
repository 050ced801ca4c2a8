// `PointInTimeSupport.readiness` of a point-in-time MySQL/MariaDB source: the test-connection check (binlog-check.ts)
// reduced to its sentences, so the catalog can refuse to save a job whose server cannot feed the binary log stream.
import { readinessFrom, type PointInTimeReadiness } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { checkBinlog } from './binlog-check.js';

/**
 * Problems (binary logging off, server_id 0, a missing REPLICATION SLAVE or REPLICATION CLIENT, a refused binlog
 * dump, no binlog reader on this host) and warnings (binlog_format, binlog_row_image, a large max_binlog_size).
 * An unreachable server or a refused sign-in rejects as test-connection reports it. The check has its own connect
 * timeouts; `signal` only stops the waiting (it rejects with ABORTED at once).
 */
export function binlogReadiness(config: MysqlSourceConfig, signal: AbortSignal): Promise<PointInTimeReadiness> {
  return readinessFrom(ORIGIN, () => checkBinlog(config), signal);
}
