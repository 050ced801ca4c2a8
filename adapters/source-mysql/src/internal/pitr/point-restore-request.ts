// What a MySQL/MariaDB point-in-time restore is asked for, checked before anything is read or written: which
// database, under which new name, and where the replay stops.
import { AdapterError, type PointRestoreInput } from '@holdfast/sdk';
import { isRestoreWorkSchema, ORIGIN, SYSTEM_SCHEMAS } from '../connection.js';
import { parseMariadbGtid, type MariadbGtid } from './binlog-gtid.js';
import { binlogNumber } from './binlog-names.js';
import type { ReplayStop } from './binlog-replay.js';

/** Where the request stops: as the replay takes it, or a GTID whose transaction's end is looked up in the archive. */
export type RequestedStop = ReplayStop | { type: 'gtid'; gtid: MariadbGtid };

export interface PointRestoreRequest {
  name: string;
  into: string;
  startFile: string;
  startOffset: number;
  stop: RequestedStop;
}

const refuse = (message: string) => new AdapterError(ORIGIN, 'CONFIG', message);

/** Letters, digits, `_`, `$` and `-`, at most 64 characters: a name every tool takes unquoted in its options. */
const SAFE_NAME = /^[\p{L}\p{N}_$-]{1,64}$/u;

/** `mysql-bin.000042:1234` -> its file and offset; undefined when it is not of that form. */
export function parseBinlogPosition(position: string): { file: string; offset: number } | undefined {
  const match = /^([^:/\s]+\.\d{6,}):(\d{1,15})$/.exec(position);
  return match ? { file: match[1]!, offset: Number(match[2]) } : undefined;
}

const basenameOf = (file: string) => file.replace(/\.\d+$/, '');

/** Checks the request against the contract and the base's coordinates; throws CONFIG on the first problem. */
export function checkRequest(input: PointRestoreInput): PointRestoreRequest {
  if (!input.database) {
    throw refuse('a MySQL/MariaDB point-in-time restore needs database { name, into }: the database of the base to restore and the new database to build it in');
  }
  const { name, into } = input.database;
  for (const [role, value] of [['name', name], ['into', into]] as const) {
    if (!SAFE_NAME.test(value) || [...value].length > 64) {
      throw refuse(`database.${role} "${value}" is not a database name a point-in-time restore takes: use 1 to 64 letters, digits, "_", "$" or "-"`);
    }
  }
  if ((SYSTEM_SCHEMAS as readonly string[]).includes(into.toLowerCase()) || isRestoreWorkSchema(into)) {
    throw refuse(`"${into}" is a system or restore work schema: choose another database.into`);
  }
  const start = parseBinlogPosition(input.base.startPosition);
  if (!start || start.file !== input.base.startSegment) {
    throw refuse(`the base backup's start position "${input.base.startPosition}" is not <binary log file>:<offset> in ${input.base.startSegment}: not a MySQL/MariaDB base`);
  }
  const request = { name, into, startFile: start.file, startOffset: start.offset };
  const { target } = input;
  switch (target.type) {
    case 'latest':
      return { ...request, stop: { type: 'end' } };
    case 'name':
      throw refuse('named restore points are PostgreSQL only: a MySQL/MariaDB restore stops at a time, a binary log position, a GTID or the latest');
    case 'time': {
      if (Number.isNaN(target.time.getTime())) throw refuse('the target time is not a valid date');
      if (target.time < input.base.consistentAt) {
        throw refuse(`the target ${target.time.toISOString()} is before this base backup was taken (${input.base.consistentAt.toISOString()}): choose an earlier base`);
      }
      // Binary log times are whole seconds: T's own second is not replayed (nothing after the target ever is).
      return { ...request, stop: { type: 'time', seconds: Math.floor(target.time.getTime() / 1000) } };
    }
    case 'position': {
      // A GTID target: found in the archive before anything is written (binlog-gtid.ts), then a position.
      if (target.isGtid) return { ...request, stop: { type: 'gtid', gtid: parseMariadbGtid(target.position) } };
      const stop = parseBinlogPosition(target.position);
      if (!stop) throw refuse(`the target position "${target.position}" is not <binary log file>:<offset> (for example mysql-bin.000042:1234)`);
      const isBefore = basenameOf(stop.file) !== basenameOf(start.file) || binlogNumber(stop.file) < binlogNumber(start.file) || (stop.file === start.file && stop.offset < start.offset);
      if (isBefore) {
        throw refuse(`the target position ${target.position} is not in this base's binary log after its start (${input.base.startPosition}): choose an earlier base or a later position`);
      }
      return { ...request, stop: { type: 'position', ...stop } };
    }
  }
}
