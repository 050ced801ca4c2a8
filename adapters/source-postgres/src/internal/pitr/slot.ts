// The physical replication slot of one WAL stream: it makes the server keep every WAL segment pg_receivewal has not
// received yet, across Holdfast and PostgreSQL restarts. Created with RESERVE_WAL so the server holds WAL from the
// moment the slot exists, not from the first connection of pg_receivewal (whose own --create-slot does not reserve).
import { createHash } from 'node:crypto';
import { AdapterError } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN, scrub, withClient } from '../connection.js';
import { withReplicationClient } from './replication-client.js';
import { insertPositionAsRecordEnd } from './insert-position.js';
import { parseLsn } from './wal-names.js';

/** PostgreSQL's limit on a slot name (NAMEDATALEN - 1). */
const MAX_SLOT_NAME = 63;
const PREFIX = 'holdfast_';

/**
 * `holdfast_<stream id>` with the id lower-cased and anything outside [a-z0-9_] turned into `_` (slot names allow
 * nothing else). An id too long for 63 characters is cut and ends with 8 hex digits of its hash, so two long ids
 * that share a beginning still get two slots.
 */
export function slotNameFor(streamId: string): string {
  const clean = streamId.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (PREFIX.length + clean.length <= MAX_SLOT_NAME) return PREFIX + clean;
  const hash = createHash('sha256').update(streamId).digest('hex').slice(0, 8);
  return `${PREFIX}${clean.slice(0, MAX_SLOT_NAME - PREFIX.length - 9)}_${hash}`;
}

/** Error codes the server answers slot commands with. */
const DUPLICATE_OBJECT = '42710';
const UNDEFINED_OBJECT = '42704';
const OBJECT_IN_USE = '55006';

const codeOf = (error: unknown) => (error as { code?: string } | null)?.code;

/** Creates the slot unless it exists; true when this call created it. */
export async function createSlotIfMissing(config: PostgresSourceConfig, slot: string): Promise<boolean> {
  return withReplicationClient(config, async (client) => {
    try {
      // The pre-15 spelling, which 15+ still accepts: one command for every version that has slots.
      await client.query(`CREATE_REPLICATION_SLOT ${slot} PHYSICAL RESERVE_WAL`);
      return true;
    } catch (error) {
      if (codeOf(error) === DUPLICATE_OBJECT) return false;
      throw slotError(config, `cannot create the replication slot "${slot}"`, error);
    }
  });
}

/** How long a drop waits for the slot to be released: the server's WAL sender outlives a stopped pg_receivewal briefly. */
const RELEASE_WAIT_MS = 5000;

/** Drops the slot; a missing slot is fine. A slot a running stream holds is refused (stop the stream first). */
export async function dropSlot(config: PostgresSourceConfig, slot: string): Promise<void> {
  const deadline = Date.now() + RELEASE_WAIT_MS;
  await withReplicationClient(config, async (client) => {
    for (;;) {
      try {
        await client.query(`DROP_REPLICATION_SLOT ${slot}`);
        return;
      } catch (error) {
        if (codeOf(error) === UNDEFINED_OBJECT) return;
        if (codeOf(error) === OBJECT_IN_USE && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        if (codeOf(error) === OBJECT_IN_USE) {
          throw new AdapterError(ORIGIN, 'TRANSIENT', `the replication slot "${slot}" is in use by a running WAL stream; stop the stream, then drop it`, { cause: error });
        }
        throw slotError(config, `cannot drop the replication slot "${slot}"`, error);
      }
    }
  });
}

function slotError(config: PostgresSourceConfig, what: string, error: unknown): AdapterError {
  const message = scrub(error instanceof Error ? error.message : String(error), config);
  const code = /max_replication_slots|all replication slots are in use/i.test(message) ? 'CONFIG' : 'TRANSIENT';
  return new AdapterError(ORIGIN, code, `${what}: ${message}`, { cause: error });
}

/** The slot as pg_replication_slots shows it, with the server's current WAL position. */
export interface SlotStatus {
  exists: boolean;
  currentLsn: bigint;
  restartLsn?: bigint;
  /** `reserved`, `extended`, `unreserved` or `lost` (invalidated past max_slot_wal_keep_size). */
  walStatus?: string;
  active: boolean;
  /** `max_slot_wal_keep_size` as the server prints it; `-1` means unlimited. */
  maxSlotWalKeepSize: string;
}

/** Reads the slot over an ordinary connection (pg_replication_slots is readable by every role). */
export async function readSlotStatus(config: PostgresSourceConfig, slot: string): Promise<SlotStatus> {
  return withClient(config, config.maintenanceDatabase, async (client) => {
    const { rows } = await client.query<{ current: string; restart: string | null; wal_status: string | null; active: boolean | null; keep: string; found: boolean }>(
      `SELECT pg_current_wal_lsn()::text AS current, s.restart_lsn::text AS restart, s.wal_status, s.active,
              current_setting('max_slot_wal_keep_size') AS keep, s.slot_name IS NOT NULL AS found
         FROM (SELECT 1) AS one LEFT JOIN pg_replication_slots s ON s.slot_name = $1`,
      [slot],
    );
    const row = rows[0]!;
    return {
      exists: row.found,
      currentLsn: parseLsn(row.current),
      ...(row.restart ? { restartLsn: parseLsn(row.restart) } : {}),
      ...(row.wal_status ? { walStatus: row.wal_status } : {}),
      active: row.active === true,
      maxSlotWalKeepSize: row.keep,
    };
  });
}

/** What {@link endSlotHolder} did. */
export type SlotHolderOutcome = { ended: true; pid: number } | { ended: false; pid?: number; reason: string };

/**
 * Ends the connection that holds the slot (its WAL sender), and waits up to 5 s for the slot to be free. Called only
 * when pg_receivewal was refused because the slot is active: the job's lease makes this stream the only live one, so
 * the holder is a stale stream, typically a pg_receivewal whose Holdfast process died (SIGKILL, OOM) and which keeps
 * streaming with no one to stop it. Ending its WAL sender makes it exit (it runs with --no-loop). A role may end the
 * sessions of its own role; a holder of another role is reported, not ended.
 */
export async function endSlotHolder(config: PostgresSourceConfig, slot: string): Promise<SlotHolderOutcome> {
  const found = await withClient(config, config.maintenanceDatabase, async (client) => {
    const { rows } = await client.query<{ pid: number | null }>('SELECT active_pid AS pid FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    const pid = rows[0]?.pid ?? undefined;
    if (pid === undefined) return { pid };
    try {
      await client.query('SELECT pg_terminate_backend($1)', [pid]);
      return { pid };
    } catch (error) {
      return { pid, refusal: scrub(error instanceof Error ? error.message : String(error), config) };
    }
  });
  if (found.pid === undefined) return { ended: false, reason: 'the slot was already free' };
  if ('refusal' in found && found.refusal) return { ended: false, pid: found.pid, reason: found.refusal };
  const deadline = Date.now() + RELEASE_WAIT_MS;
  while (Date.now() < deadline) {
    if (!(await readSlotStatus(config, slot)).active) return { ended: true, pid: found.pid };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ended: false, pid: found.pid, reason: `its WAL sender (PID ${found.pid}) did not let go within ${RELEASE_WAIT_MS / 1000} s` };
}

/**
 * The server's WAL insert position, paired with the local time read before the query was sent (see flush-clock.ts):
 * every commit acknowledged before `at` is at or below `lsn`. The insert position, not the flush position: with
 * `synchronous_commit = off` a commit is acknowledged before its WAL is flushed (CI restored "latest" without the last
 * commit on such a server when the flush position dated the pieces). A standby reports what it has received (with
 * asynchronous replication a commit acknowledged by the primary may not have reached it yet; docs/pitr.md). Also the
 * last checkpoint's start (time and redo position: nothing was inserted beyond redo when the checkpoint began) when
 * the role may read it, which dates the WAL a slot reserved before the stream took its first reading.
 */
export async function readFlushSamples(config: PostgresSourceConfig, segmentSize: number): Promise<{ now?: { at: number; lsn: bigint }; checkpoint?: { at: number; lsn: bigint } }> {
  return withClient(config, config.maintenanceDatabase, async (client) => {
    const at = Date.now();
    const { rows } = await client.query<{ position: string | null; standby: boolean; block: string }>(
      "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_insert_lsn() END)::text AS position, pg_is_in_recovery() AS standby, current_setting('wal_block_size') AS block",
    );
    const reading = rows[0];
    const blockSize = Number(reading?.block);
    const asRecordEnd = (lsn: bigint) => insertPositionAsRecordEnd(lsn, blockSize, segmentSize);
    const position = reading?.position ? (reading.standby ? parseLsn(reading.position) : asRecordEnd(parseLsn(reading.position))) : undefined;
    let checkpoint: { at: number; lsn: bigint } | undefined;
    try {
      const control = await client.query<{ redo: string | null; seconds: string | null }>('SELECT redo_lsn::text AS redo, extract(epoch FROM checkpoint_time)::bigint::text AS seconds FROM pg_control_checkpoint()');
      const row = control.rows[0];
      // checkpoint_time is in whole seconds, rounded down: still no later than the checkpoint's start.
      if (row?.redo && row.seconds) checkpoint = { at: Number(row.seconds) * 1000, lsn: asRecordEnd(parseLsn(row.redo)) };
    } catch {
      // pg_control_checkpoint() is not granted to every role: without it the stream only dates what it read itself.
    }
    return { ...(position !== undefined ? { now: { at, lsn: position } } : {}), ...(checkpoint ? { checkpoint } : {}) };
  });
}
