/**
 * Frames of the calls the server makes on an agent once it said hello (docs/agents.md "Protocol"). Only the server
 * starts calls: there is no frame by which an agent asks for a job, a destination or a secret. Text frames are JSON;
 * byte streams travel as binary frames tagged with their call id, paced by credit the receiver grants.
 */
import { z } from 'zod';
import { sealedBundle } from './sealed-bundle.js';

/** The source adapter methods an agent runs for the server. */
export const CALL_METHODS = [
  'check',
  'detectVersion',
  'listDatabases',
  'databaseSizes',
  'dump',
  'restore',
  'restoreWouldReplace',
  // Test restores on the agent's server (its source's scratch with placement `database`), agents listing `scratch`.
  'scratchFigures',
  'scratchIntegrityCheck',
  'scratchListDatabases',
  'scratchDatabaseExists',
  'scratchDropDatabase',
  // Test restores into a scratch file (its folder on the agent's disk) or a reserved index, agents listing `scratch-files`.
  'scratchReadOwner',
  'scratchWriteOwner',
  'scratchMakeFolder',
  'scratchRemoveFolder',
  // Seekable archives (remote-archive.ts), agents listing `archive`: write one, restore (part of) a snapshot.
  'archiveDump',
  'archiveRestore',
  // Direct uploads (issue 48 scope 3), agents listing `direct`: dump, compress, encrypt, hash and upload on the agent.
  'directDump',
] as const;

/** Calls only an agent whose hello lists the `scratch` feature answers. */
export const SCRATCH_METHODS: ReadonlySet<CallMethod> = new Set(['scratchFigures', 'scratchIntegrityCheck', 'scratchListDatabases', 'scratchDatabaseExists', 'scratchDropDatabase']);
/** Calls only an agent whose hello lists the `scratch-files` feature answers (scratch files and indexes). */
export const SCRATCH_FILE_METHODS: ReadonlySet<CallMethod> = new Set(['scratchReadOwner', 'scratchWriteOwner', 'scratchMakeFolder', 'scratchRemoveFolder']);
export type CallMethod = (typeof CALL_METHODS)[number];

/** Bytes a receiver grants when a stream starts: at most this much is ever in flight or waiting to be read. */
export const STREAM_WINDOW_BYTES = 1024 * 1024;

/** Largest payload of one binary data frame (the 4-byte call id tag comes on top). */
export const DATA_CHUNK_BYTES = 128 * 1024;

/** Largest single credit grant a frame may carry (a receiver never needs more than its window at once). */
export const MAX_CREDIT_BYTES = 64 * 1024 * 1024;

const callId = z.number().int().min(1).max(0xffffffff);
const record = z.record(z.string(), z.unknown());

/** Server to agent: run `method` of a fresh instance of source adapter `adapterId` with this config. */
export const callFrame = z.strictObject({
  type: z.literal('call'),
  id: callId,
  method: z.enum(CALL_METHODS),
  adapterId: z.string().min(1).max(255),
  /** The source's config with its decrypted secrets, for this call only: the agent never stores it. */
  config: record,
  /** Decrypted credential profile payloads by role (`primary`, `ssh`), for this call only. */
  credentials: z.record(z.string(), record),
  /** Method arguments: dump `{ databases, engineOptions }`, restore `{ target, overwrite }`, restoreWouldReplace `{ target }`. */
  options: record,
  /** directDump: the destinations' configs and the job's key, sealed to this connection's key (sealed-bundle.ts). */
  sealed: sealedBundle.optional(),
});

/**
 * Server to agent, directDump: the object key the backup is stored under, chosen once the agent's `opened` named the
 * dump's extension. The agent starts its uploads only then.
 */
export const targetFrame = z.strictObject({ type: z.literal('target'), id: callId, key: z.string().min(1).max(1024) });
/** Agent to server, directDump: plaintext bytes read from the source so far (the run's progress). */
export const progressFrame = z.strictObject({ type: z.literal('progress'), id: callId, bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });

/** Either side: abort the call (server to agent), or the receiver grants `bytes` more of the call's stream. */
export const cancelFrame = z.strictObject({ type: z.literal('cancel'), id: callId });
export const creditFrame = z.strictObject({ type: z.literal('credit'), id: callId, bytes: z.number().int().min(1).max(MAX_CREDIT_BYTES) });
/** Either side: the call's byte stream it sends has ended (dump output, restore input). */
export const endFrame = z.strictObject({ type: z.literal('end'), id: callId });

/** Agent to server: the dump started; its bytes follow as data frames, then `end`, then the result (its stats). */
export const openedFrame = z.strictObject({ type: z.literal('opened'), id: callId, extension: z.string().max(32) });
/** Agent to server: the call's value. */
export const resultFrame = z.strictObject({ type: z.literal('result'), id: callId, value: z.unknown() });
/** Agent to server: the call failed; `code` is the adapter error code when it was one. */
export const errorFrame = z.strictObject({
  type: z.literal('error'),
  id: callId,
  message: z.string().max(4000),
  code: z.enum(['NOT_FOUND', 'AUTH', 'CONFIG', 'TRANSIENT', 'ABORTED', 'UNSUPPORTED', 'LOCKED']).optional(),
});

/** Longest message of one forwarded log line (the agent truncates; the server refuses longer). */
export const MAX_LOG_MESSAGE_CHARS = 2000;
/** Log lines of one call the server writes to the run's log; later ones are dropped (the agent limits itself lower). */
export const MAX_LOG_LINES_PER_CALL = 1000;

/** Agent to server: a log line the source adapter wrote during the call (written to the run's log). */
export const logFrame = z.strictObject({
  type: z.literal('log'),
  id: callId,
  level: z.enum(['info', 'warn', 'error']),
  message: z.string().max(MAX_LOG_MESSAGE_CHARS),
});

/** Every text frame the server accepts from an agent after its hello. */
export const agentCallFrame = z.discriminatedUnion('type', [openedFrame, resultFrame, errorFrame, creditFrame, endFrame, logFrame, progressFrame]);
/** Every text frame the agent accepts from the server after its welcome. */
export const serverCallFrame = z.discriminatedUnion('type', [callFrame, cancelFrame, creditFrame, endFrame, targetFrame]);

export type CallFrame = z.infer<typeof callFrame>;
export type AgentCallFrame = z.infer<typeof agentCallFrame>;
export type ServerCallFrame = z.infer<typeof serverCallFrame>;

/** A binary data frame: the call id (uint32, big endian) then the bytes. */
export function dataFrame(id: number, bytes: Buffer): Buffer {
  const tag = Buffer.allocUnsafe(4);
  tag.writeUInt32BE(id, 0);
  return Buffer.concat([tag, bytes]);
}

/** The call id and bytes of a binary data frame, or undefined when it is too short to hold a tag. */
export function readDataFrame(frame: Buffer): { id: number; bytes: Buffer } | undefined {
  if (frame.length < 4) return undefined;
  return { id: frame.readUInt32BE(0), bytes: frame.subarray(4) };
}
