/**
 * What a `directDump` call carries (issue 48 scope 3): the options in the clear (nothing secret) and, sealed to the
 * agent's connection key, the destinations' settings with their decrypted secrets and the job's key. Both sides
 * validate with these schemas; the agent refuses a call whose bundle does not parse.
 */
import { z } from 'zod';

const record = z.record(z.string(), z.unknown());

/** Options of a directDump call, in the clear. */
export const directDumpOptions = z.strictObject({
  databases: z.array(z.string().max(255)).max(1000),
  engineOptions: record,
  codec: z.string().min(1).max(16),
  compression: z.strictObject({ level: z.number().int().nullable(), threads: z.number().int().nullable() }),
  /** Some destinations are relayed: the processed bytes also go to the server on the call's stream. */
  relay: z.boolean(),
});
export type DirectDumpOptions = z.infer<typeof directDumpOptions>;

/** One destination the agent uploads to, as sealed in the bundle. */
export const directDestination = z.strictObject({
  configId: z.string().min(1).max(64),
  name: z.string().min(1).max(255),
  adapterId: z.string().min(1).max(255),
  config: record,
  credentials: z.record(z.string(), record),
  /** ISO date: the object lock to write the backup with. */
  retainUntil: z.string().max(64).optional(),
});

/** The sealed part of a directDump call: secrets for this call only, never written by the agent. */
export const directBundle = z.strictObject({
  destinations: z.array(directDestination).min(1).max(50),
  /** The job's 32-byte symmetric key (base64), or null. */
  encryptionKey: z.string().max(64).nullable(),
  /** The job's public-key profile recipient (`age1...`), or null. */
  recipient: z.string().max(512).nullable(),
});
export type DirectBundle = z.infer<typeof directBundle>;

/** The agent's result of a directDump call. */
export const directDumpResult = z.strictObject({
  stats: record,
  digests: z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/), md5: z.string().regex(/^[0-9a-f]{32}$/), bytes: z.number().int().min(0) }),
  encryption: record.nullable(),
  outcomes: z.array(z.strictObject({ configId: z.string(), ok: z.boolean(), size: z.number().int().min(0).optional(), error: z.string().max(4000).optional() })).max(50),
});
export type DirectDumpResultFrame = z.infer<typeof directDumpResult>;
