// Can this server and role feed point-in-time recovery (issue 43)? Physical base backups and WAL streaming need a
// wal_level of replica or logical, WAL senders and replication slots, a role with REPLICATION (or a superuser) and a
// pg_hba.conf line for *replication* connections (`all` in the database column does not cover them). Each missing
// piece becomes one sentence telling the operator what to change. Groundwork only: nothing streams WAL yet.
import type pg from 'pg';
import type { PostgresSourceConfig } from '../config.js';
import { connectionError, scrub, withClient } from './connection.js';
import { replicationClientOptions } from './replication-options.js';

/** What the server says about itself and the connecting role over an ordinary connection. */
export interface ReplicationSettings {
  walLevel: string;
  maxWalSenders: number;
  maxReplicationSlots: number;
  /** The role has REPLICATION or is a superuser. */
  roleCanReplicate: boolean;
  /** `max_slot_wal_keep_size` as the server prints it (`-1`: unlimited); absent before PostgreSQL 13, which has none. */
  maxSlotWalKeepSize?: string;
}

/** Outcome of opening a physical replication connection and running IDENTIFY_SYSTEM on it. */
export type ReplicationConnection =
  | { accepted: true; systemIdentifier: string; timeline: number }
  | { accepted: false; serverMessage: string; /** The pg_hba.conf line that would let this role in, when that is what refused it. */ missingHbaLine?: string };

export interface ReplicationCheck extends ReplicationSettings {
  connection: ReplicationConnection;
  /** One human sentence per missing setting, privilege or pg_hba.conf line; empty when the source is ready. */
  problems: string[];
  /** Risks that do not stop point-in-time recovery (an unlimited slot can fill the server's disk). */
  warnings: string[];
  ready: boolean;
}

/** A base backup and one WAL stream may run at once: each holds a WAL sender. */
const WAL_SENDERS_NEEDED = 2;

/** Asks the server, then tries a replication connection; a failing ordinary connection throws as elsewhere. */
export async function checkReplication(config: PostgresSourceConfig): Promise<ReplicationCheck> {
  const settings = await withClient(config, config.maintenanceDatabase, readSettings);
  const connection = await tryReplicationConnection(config);
  const problems = replicationProblems(config, settings, connection);
  return { ...settings, connection, problems, warnings: replicationWarnings(config, settings), ready: problems.length === 0 };
}

async function readSettings(client: pg.Client): Promise<ReplicationSettings> {
  const { rows } = await client.query<{ wal_level: string; max_wal_senders: string; max_replication_slots: string; keep: string | null; can_replicate: boolean }>(
    `SELECT current_setting('wal_level') AS wal_level,
            current_setting('max_wal_senders') AS max_wal_senders,
            current_setting('max_replication_slots') AS max_replication_slots,
            current_setting('max_slot_wal_keep_size', true) AS keep,
            (r.rolreplication OR r.rolsuper) AS can_replicate
       FROM pg_roles r WHERE r.rolname = current_user`,
  );
  const row = rows[0]!;
  return {
    walLevel: row.wal_level,
    maxWalSenders: Number(row.max_wal_senders),
    maxReplicationSlots: Number(row.max_replication_slots),
    roleCanReplicate: row.can_replicate,
    ...(row.keep === null ? {} : { maxSlotWalKeepSize: row.keep }),
  };
}

/**
 * Sentences about settings that work but put the database server at risk: a slot with no cap on the WAL it holds
 * back fills the server's disk when the stream stops (docs/pitr.md, "A replication slot can fill the server's disk").
 */
export function replicationWarnings(config: Pick<PostgresSourceConfig, 'host' | 'port'>, settings: Pick<ReplicationSettings, 'maxSlotWalKeepSize'>): string[] {
  const server = `${config.host}:${config.port}`;
  if (settings.maxSlotWalKeepSize === undefined) {
    return [`${server} has no max_slot_wal_keep_size (PostgreSQL before 13): if the WAL stream stops, the replication slot keeps WAL until the server's disk is full; watch the slot lag (pitr_lag) closely.`];
  }
  if (settings.maxSlotWalKeepSize !== '-1') return [];
  return [
    `max_slot_wal_keep_size is -1 (unlimited) on ${server}: if the WAL stream stops, the replication slot keeps WAL until the server's disk is full; set it (for example max_slot_wal_keep_size = 50GB) and reload PostgreSQL.`,
  ];
}

/** Opens a physical replication connection (the kind pg_basebackup and pg_receivewal open) and identifies the system. */
async function tryReplicationConnection(config: PostgresSourceConfig): Promise<ReplicationConnection> {
  const { default: driver } = await import('pg');
  const options = replicationClientOptions(config);
  const client = new driver.Client(options);
  client.on('error', () => undefined);
  try {
    await client.connect();
    // A walsender speaks only the simple query protocol, which a query without parameters uses.
    const { rows } = await client.query<{ systemid: string; timeline: string }>('IDENTIFY_SYSTEM');
    return { accepted: true, systemIdentifier: String(rows[0]!.systemid), timeline: Number(rows[0]!.timeline) };
  } catch (error) {
    const serverMessage = scrub(error instanceof Error ? error.message : String(error), config);
    if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|timeout/i.test(serverMessage)) throw connectionError(error, config);
    const missingHbaLine = hbaLineFor(serverMessage, config.user);
    return missingHbaLine ? { accepted: false, serverMessage, missingHbaLine } : { accepted: false, serverMessage };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The line to add when pg_hba.conf refused the replication connection. The server's message names the client address
 * it saw (which may differ from the address Holdfast dialled, behind NAT or a proxy), so the line uses that address.
 */
export function hbaLineFor(serverMessage: string, user: string): string | undefined {
  const match = /pg_hba\.conf (?:entry for|rejects) replication connection from host "([^"]+)"/.exec(serverMessage);
  if (!match) return undefined;
  const role = /^[a-z_][a-z0-9_$]*$/.test(user) ? user : `"${user.replaceAll('"', '""')}"`;
  const address = match[1]!;
  if (address === '[local]') return `local replication ${role} scram-sha-256`;
  return `host replication ${role} ${address}/${address.includes(':') ? 128 : 32} scram-sha-256`;
}

/** One sentence per problem, in the order an operator would fix them (settings need a restart, the rest a reload). */
export function replicationProblems(
  config: Pick<PostgresSourceConfig, 'host' | 'port' | 'user'>,
  settings: ReplicationSettings,
  connection: ReplicationConnection,
): string[] {
  const server = `${config.host}:${config.port}`;
  const problems: string[] = [];
  if (settings.walLevel !== 'replica' && settings.walLevel !== 'logical') {
    problems.push(
      `wal_level is "${settings.walLevel}" on ${server}; point-in-time recovery needs "replica" (or "logical"): set wal_level = replica in postgresql.conf and restart PostgreSQL.`,
    );
  }
  if (settings.maxWalSenders < WAL_SENDERS_NEEDED) {
    problems.push(
      `max_wal_senders is ${settings.maxWalSenders} on ${server}; the WAL stream and a base backup each hold a WAL sender: set max_wal_senders to at least ${WAL_SENDERS_NEEDED} (10 is usual) and restart PostgreSQL.`,
    );
  }
  if (settings.maxReplicationSlots < 1) {
    problems.push(
      `max_replication_slots is 0 on ${server}; Holdfast keeps the WAL it has not archived yet with a replication slot: set max_replication_slots to at least 1 (10 is usual) and restart PostgreSQL.`,
    );
  }
  if (!settings.roleCanReplicate) {
    problems.push(
      `role "${config.user}" lacks the REPLICATION privilege: run ALTER ROLE "${config.user}" REPLICATION; as a superuser (or connect as a role that has it).`,
    );
  }
  if (!connection.accepted) {
    if (connection.missingHbaLine) {
      problems.push(
        `pg_hba.conf on ${server} has no line allowing replication connections for role "${config.user}" (a line whose database is "all" does not cover them): add "${connection.missingHbaLine}" and reload PostgreSQL (SELECT pg_reload_conf()).`,
      );
    } else if (!alreadyExplained(settings, connection.serverMessage)) {
      // Any other refusal is reported in the server's words.
      problems.push(`${server} refused a replication connection as "${config.user}": ${connection.serverMessage}`);
    }
  }
  return problems;
}

/** Refusals that a sentence above already explains (the missing privilege, no WAL senders). */
function alreadyExplained(settings: ReplicationSettings, serverMessage: string): boolean {
  if (!settings.roleCanReplicate && /must be superuser or replication role/i.test(serverMessage)) return true;
  return settings.maxWalSenders < WAL_SENDERS_NEEDED && /max_wal_senders/i.test(serverMessage);
}
