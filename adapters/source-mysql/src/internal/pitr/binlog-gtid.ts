// A GTID restore target (docs/pitr.md, "Restore to an instant", target gtid): "every transaction up to and including
// the one with this GTID, none after it in log order". The archived binary log is read once before anything is
// written, from the base's coordinates on, to find that transaction and the byte where it ends (the end of its
// XID or COMMIT event); the replay then stops there exactly as a position target does. Only MariaDB's form
// (`domain-server-sequence`) is understood: MySQL's `uuid:n` is refused, there is no MySQL server to test it on.
import type { Readable } from 'node:stream';
import { AdapterError, type PointRestoreInput } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';
import { binlogAfter } from './binlog-names.js';

/** A MariaDB GTID: the transaction numbered `sequence` in replication domain `domain`, first logged by `serverId`. */
export interface MariadbGtid {
  domain: number;
  serverId: number;
  sequence: bigint;
}

/** Where the located transaction ends: the replay stops before the event that begins at `offset` of `file`. */
export interface GtidEnd {
  file: string;
  offset: number;
}

const refuse = (message: string) => new AdapterError(ORIGIN, 'CONFIG', message);

const UINT32_MAX = 0xffff_ffff;
const UINT64_MAX = (1n << 64n) - 1n;

export const formatGtid = (gtid: MariadbGtid) => `${gtid.domain}-${gtid.serverId}-${gtid.sequence}`;

/** `0-1-352` -> its parts; throws CONFIG naming the problem for anything else (MySQL's `uuid:n` included). */
export function parseMariadbGtid(text: string): MariadbGtid {
  if (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}:/i.test(text)) {
    throw refuse(`the target GTID "${text}" is MySQL's form (server uuid:transaction number), which is not supported: only MariaDB GTIDs (domain-server-sequence, for example 0-1-352) are; restore to a time or a binary log position instead`);
  }
  const match = /^(\d{1,10})-(\d{1,10})-(\d{1,20})$/.exec(text);
  if (!match) {
    throw refuse(`the target GTID "${text}" is not one MariaDB GTID: write domain-server-sequence, for example 0-1-352 (@@last_gtid after the transaction's commit; one GTID, not a list)`);
  }
  const [domain, serverId, sequence] = [Number(match[1]), Number(match[2]), BigInt(match[3]!)];
  if (domain > UINT32_MAX || serverId > UINT32_MAX || sequence > UINT64_MAX || sequence === 0n) {
    throw refuse(`the target GTID "${text}" is out of range: domain and server id are 32-bit numbers, the sequence a 64-bit number from 1`);
  }
  return { domain, serverId, sequence };
}

// Event header (19 bytes): timestamp 4, type 1, server id 4, event length 4, next position 4, flags 2.
const HEADER = 19;
const MAGIC_BYTES = 4;
const QUERY_EVENT = 2;
const XID_EVENT = 16;
const XA_PREPARE_EVENT = 38;
const MARIADB_GTID_EVENT = 162;
/** MariaDB GTID event flag: a statement outside any transaction (DDL): its one Query event ends it. */
const FL_STANDALONE = 1;
/** Query event: the fixed part after the header (thread id 4, exec time 4, db length 1, error code 2, status length 2). */
const QUERY_POST_HEADER = 13;
/** Enough of a Query event's statement to know whether it ends a transaction. */
const QUERY_TEXT_PEEK = 16;

/** How many leading bytes of an event the walk needs, from what it has of it (at least the header). */
function prefixWanted(head: Buffer, length: number): number {
  if (head.length < HEADER) return HEADER;
  const type = head[4]!;
  if (type === MARIADB_GTID_EVENT) return Math.min(length, HEADER + 13);
  if (type !== QUERY_EVENT) return HEADER;
  if (head.length < HEADER + QUERY_POST_HEADER) return Math.min(length, HEADER + QUERY_POST_HEADER);
  const databaseLength = head[HEADER + 8]!;
  const statusLength = head.readUInt16LE(HEADER + 11);
  return Math.min(length, HEADER + QUERY_POST_HEADER + statusLength + databaseLength + 1 + QUERY_TEXT_PEEK);
}

/** The start of a Query event's statement, as far as the prefix holds it. */
function queryText(head: Buffer): string {
  if (head.length < HEADER + QUERY_POST_HEADER) return '';
  const at = HEADER + QUERY_POST_HEADER + head.readUInt16LE(HEADER + 11) + head[HEADER + 8]! + 1;
  return head.subarray(at).toString('latin1');
}

interface WalkedEvent {
  start: number;
  end: number;
  type: number;
  serverId: number;
  head: Buffer;
}

/**
 * Walks the events of one binary log file as its bytes stream by, keeping only each event's first bytes (the header
 * and, for GTID and Query events, what the search reads): memory stays small whatever the events' size. `visit`
 * returns true to stop early. Answers the bytes seen.
 */
async function walkEvents(name: string, stream: Readable, visit: (event: WalkedEvent) => boolean): Promise<number> {
  let seen = 0;
  let start = MAGIC_BYTES;
  let head = Buffer.alloc(0);
  let end = -1; // end of the current event, once its header is read
  let isVisited = false;
  for await (const piece of stream) {
    const chunk = piece as Buffer;
    const chunkStart = seen;
    seen += chunk.length;
    let at = Math.max(0, MAGIC_BYTES - chunkStart);
    while (at < chunk.length) {
      const wanted = end < 0 ? HEADER : prefixWanted(head, end - start);
      if (head.length < wanted) {
        const take = Math.min(wanted - head.length, chunk.length - at);
        head = Buffer.concat([head, chunk.subarray(at, at + take)]);
        at += take;
        if (end < 0 && head.length === HEADER) {
          const length = head.readUInt32LE(9);
          if (length < HEADER) throw new AdapterError(ORIGIN, 'TRANSIENT', `the archived binary log file ${name} is not readable: impossible event length ${length} at byte ${start}`);
          end = start + length;
        }
      }
      if (end < 0 || head.length < prefixWanted(head, end - start)) continue;
      if (!isVisited) {
        isVisited = true;
        if (visit({ start, end, type: head[4]!, serverId: head.readUInt32LE(5), head })) {
          stream.destroy();
          return seen;
        }
      }
      // The prefix is read: skip the rest of the event.
      at += Math.min(end - (chunkStart + at), chunk.length - at);
      if (chunkStart + at === end) {
        start = end;
        head = Buffer.alloc(0);
        end = -1;
        isVisited = false;
      }
    }
  }
  return seen;
}

/** True when this event closes the open transaction (its GTID event's flags say which kind it is). */
function endsTransaction(event: WalkedEvent, gtidFlags: number): boolean {
  if (event.type === XID_EVENT || event.type === XA_PREPARE_EVENT) return true;
  if (event.type !== QUERY_EVENT) return false;
  if (gtidFlags & FL_STANDALONE) return true;
  return /^(COMMIT|ROLLBACK|XA COMMIT|XA ROLLBACK)\b/i.test(queryText(event.head).trimStart());
}

/**
 * Finds where the transaction `gtid` ends in the archived binary log, from the base's coordinates on, reading each
 * file from the archive in order (`fetchSegment`, as the replay does). Refuses (CONFIG) a GTID logged before the base
 * started, one the archive does not hold from there on, and one whose transaction is not whole in the archive.
 */
export async function locateGtidEnd(
  gtid: MariadbGtid,
  from: { startFile: string; startOffset: number },
  fetchSegment: PointRestoreInput['fetchSegment'],
  signal: AbortSignal,
): Promise<GtidEnd> {
  const text = formatGtid(gtid);
  /** Lowest and highest sequence of the target's domain seen from the base on: what a refusal says about it. */
  let lowest: bigint | undefined;
  let highest: bigint | undefined;
  let lastFile = from.startFile;
  for (let name = from.startFile, isFirst = true; ; name = binlogAfter(name), isFirst = false) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted');
    const fetched = await fetchSegment(name);
    if (!fetched) break;
    lastFile = name;
    let open: { flags: number } | undefined;
    let found: GtidEnd | undefined;
    let before: number | undefined;
    const bytes = await walkEvents(name, fetched, (event) => {
      if (open) {
        // A GTID event before the end: a transaction logged without one (not seen on MariaDB): it ends here.
        if (event.type === MARIADB_GTID_EVENT) found = { file: name, offset: event.start };
        else if (endsTransaction(event, open.flags)) found = { file: name, offset: event.end };
        return found !== undefined;
      }
      if (event.type !== MARIADB_GTID_EVENT || event.head.length < HEADER + 13) return false;
      const sequence = event.head.readBigUInt64LE(HEADER);
      const domain = event.head.readUInt32LE(HEADER + 8);
      const isTarget = domain === gtid.domain && event.serverId === gtid.serverId && sequence === gtid.sequence;
      if (isFirst && event.start < from.startOffset) {
        if (isTarget) before = event.start;
        return false;
      }
      if (domain === gtid.domain) {
        lowest = lowest === undefined || sequence < lowest ? sequence : lowest;
        highest = highest === undefined || sequence > highest ? sequence : highest;
      }
      if (isTarget) open = { flags: event.head[HEADER + 12]! };
      return false;
    });
    if (before !== undefined) {
      throw refuse(`GTID ${text} was logged at ${name}:${before}, before this base backup starts (${from.startFile}:${from.startOffset}): its transaction is already in the base; choose an earlier base or a later GTID`);
    }
    if (found) return found;
    if (open) {
      throw refuse(`the transaction of GTID ${text} is not whole in the archived binary log file ${name} (it ends at byte ${bytes} before the transaction's commit): wait until the archive holds the rest, or choose an earlier GTID`);
    }
  }
  if (lowest !== undefined && gtid.sequence < lowest) {
    throw refuse(`GTID ${text} is not in the archived binary log from this base's start (${from.startFile}:${from.startOffset}) on, where domain ${gtid.domain} begins at sequence ${lowest}: it was logged before this base; choose an earlier base`);
  }
  const domainSeen = highest === undefined ? `no transaction of domain ${gtid.domain} is there` : `domain ${gtid.domain} goes up to sequence ${highest}`;
  throw refuse(`GTID ${text} is not in the archived binary log from this base's start (${from.startFile}:${from.startOffset}) to the end of ${lastFile} (${domainSeen}): check the GTID (@@last_gtid after its commit) or wait until it is archived`);
}
