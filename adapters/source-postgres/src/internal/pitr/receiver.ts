// One run of pg_receivewal into the spool, and what its exit means. It runs with --no-loop: the WAL stream restarts
// it itself, so it can look at the slot between runs (recreate a dropped one, report a gap) instead of pg_receivewal
// retrying the same refused command forever.
import type { PostgresSourceConfig } from '../../config.js';
import { scrub } from '../connection.js';
import { startTool, type ToolProcess } from '../tool-process.js';

/** The progress lines of pg_receivewal -v that the stream acts on. */
export type ReceiverEvent =
  | { type: 'streaming'; lsn: string; timeline: number }
  | { type: 'segment-finished'; lsn: string; timeline: number };

/**
 * Starts pg_receivewal on the slot. Without --synchronous it writes WAL to the spool as it arrives and fsyncs when
 * a segment completes (a partial snapshot reads the written bytes; nothing waits for a per-message fsync). Status
 * every second keeps the slot's position, and with it the lag gauge, current.
 */
export async function startReceiver(
  config: PostgresSourceConfig,
  spoolDir: string,
  slot: string,
  onEvent: (event: ReceiverEvent) => void,
): Promise<ToolProcess> {
  const args = [
    ...['--directory', spoolDir, '--slot', slot, '--no-loop', '--verbose', '--status-interval=1'],
    ...['--host', config.host, '--port', String(config.port), '--username', config.user, '--no-password'],
  ];
  // The stream stops pg_receivewal with terminate() (SIGTERM, a clean stop); this signal is never aborted.
  const tool = await startTool(config, undefined, 'pg_receivewal', args, new AbortController().signal);
  let pending = '';
  tool.onStderr?.((text) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const streaming = /starting log streaming at ([0-9A-F]+\/[0-9A-F]+) \(timeline (\d+)\)/.exec(line);
      if (streaming) onEvent({ type: 'streaming', lsn: streaming[1]!, timeline: Number(streaming[2]) });
      const finished = /finished segment at ([0-9A-F]+\/[0-9A-F]+) \(timeline (\d+)\)/.exec(line);
      if (finished) onEvent({ type: 'segment-finished', lsn: finished[1]!, timeline: Number(finished[2]) });
    }
  });
  return tool;
}

/** Why pg_receivewal stopped, from its stderr. */
export type ReceiverExitKind =
  /** The slot does not exist (dropped by someone): recreate it. */
  | 'slot-missing'
  /**
   * Another connection holds the slot: a pg_receivewal left running by a Holdfast process that died (SIGKILL, OOM)
   * keeps streaming into the spool with no one to stop it. The job's lease says this stream is the only live one.
   */
  | 'slot-busy'
  /** The server no longer has the WAL pg_receivewal asked for (slot invalidated, or dropped long enough): a gap. */
  | 'wal-removed'
  /** Authentication, privilege or pg_hba.conf: retrying cannot help. */
  | 'refused'
  /** Anything else (server restart, network): retry with backoff. */
  | 'transient';

export function classifyReceiverExit(stderr: string): ReceiverExitKind {
  if (/replication slot "[^"]+" does not exist/.test(stderr)) return 'slot-missing';
  if (/replication slot "[^"]+" is active for PID \d+/.test(stderr)) return 'slot-busy';
  if (/has already been removed|has been invalidated|cannot read from .*replication slot/i.test(stderr)) return 'wal-removed';
  if (/password authentication failed|no pg_hba\.conf entry|must be superuser or replication role|FATAL:\s+permission denied|role "[^"]+" does not exist|must have the REPLICATION attribute/i.test(stderr)) {
    return 'refused';
  }
  return 'transient';
}

/** The last error lines of pg_receivewal, without the password, for messages. */
export function receiverError(config: PostgresSourceConfig, stderr: string): string {
  const lines = stderr.split('\n').filter((line) => /error|fatal|could not/i.test(line));
  return scrub((lines.length > 0 ? lines.slice(-2) : stderr.split('\n').slice(-2)).join(' ').trim(), config);
}
