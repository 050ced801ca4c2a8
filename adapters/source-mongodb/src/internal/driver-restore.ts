import type { Readable } from 'node:stream';
import type { Document, MongoClient } from 'mongodb';
import { loadedBson } from './driver.js';
import type { RestoreResult } from '@holdfast/sdk';
import { aborted, mongoError } from './errors.js';
import { FrameReader, type Frame } from './format.js';
import { restoreUsersAndRoles } from './users.js';

/** How a restore maps and writes. */
export interface ImportPlan {
  targetOf: (database: string) => string;
  dropBeforeRestore: boolean;
  includeUsers: boolean;
  batchSize: number;
  signal: AbortSignal;
}

/** Deserialisation keeps every BSON type as it was (Int32 stays Int32, Long stays Long, regexes stay BSON). */
const EXACT = { promoteLongs: false, promoteValues: false, promoteBuffers: false, bsonRegExp: true } as const;

/**
 * Restores an export stream: per collection it drops (when asked) and recreates the collection with its options,
 * inserts the documents in ordered batches, then builds the indexes (after the data: faster, and a unique index
 * proves the data). Users and roles are merged when asked.
 */
export async function driverImport(client: MongoClient, input: Readable, plan: ImportPlan): Promise<RestoreResult> {
  const reader = new FrameReader();
  const warnings: string[] = [];
  let database: string | undefined;
  let source: string | undefined;
  let collection: { name: string; indexes: Document[] } | undefined;
  let batch: Document[] = [];
  let isEnded = false;

  const flushBatch = async () => {
    if (batch.length === 0 || !database || !collection) return;
    await client.db(database).collection(collection.name).insertMany(batch, { ordered: true, bypassDocumentValidation: true });
    batch = [];
  };
  const finishCollection = async () => {
    await flushBatch();
    if (database && collection) {
      const indexes = collection.indexes.filter((index) => index.name !== '_id_').map(({ v: _v, ns: _ns, ...index }) => index);
      if (indexes.length > 0) await client.db(database).command({ createIndexes: collection.name, indexes });
    }
    collection = undefined;
  };
  const handle = async (frame: Frame) => {
    if (isEnded) throw mongoError('CONFIG', 'corrupt export stream: data after the end frame');
    if (frame.type === 'D') {
      if (!collection) throw mongoError('CONFIG', 'corrupt export stream: a document before any collection');
      batch.push(loadedBson().deserialize(frame.bson, EXACT));
      if (batch.length >= plan.batchSize) await flushBatch();
      return;
    }
    await finishCollection();
    if (frame.type === 'B') {
      source = String(frame.json.name);
      database = plan.targetOf(source);
    }
    else if (frame.type === 'C') collection = await prepareCollection(client, database, frame.json, plan.dropBeforeRestore);
    else if (frame.type === 'U' && plan.includeUsers && database) await restoreUsersAndRoles(client, { source: source!, database }, frame.json, warnings);
    else if (frame.type === 'Z') isEnded = true;
  };

  for await (const chunk of input) {
    if (plan.signal.aborted) throw aborted('restore');
    let frames: Frame[];
    try {
      frames = reader.push(chunk as Buffer);
    } catch (error) {
      throw mongoError('CONFIG', (error as Error).message);
    }
    for (const frame of frames) await handle(frame);
  }
  if (!isEnded || reader.pendingBytes > 0) throw mongoError('CONFIG', 'the export stream is truncated (no end frame); the restore is incomplete');
  return { warnings };
}

async function prepareCollection(client: MongoClient, database: string | undefined, json: Record<string, unknown>, drop: boolean): Promise<{ name: string; indexes: Document[] }> {
  if (!database) throw mongoError('CONFIG', 'corrupt export stream: a collection before any database');
  const name = String(json.name);
  const db = client.db(database);
  if (drop) {
    await db.command({ drop: name }).catch((error: { code?: number }) => {
      if (error?.code !== 26) throw error; // 26 NamespaceNotFound: nothing to drop
    });
  }
  const options = (json.options ?? {}) as Document;
  // Options (capped, validator, collation, timeseries, view pipeline) need an explicit create; plain ones appear on insert.
  if (Object.keys(options).length > 0 || json.type === 'view') {
    await db.command({ create: name, ...options }).catch((error: { code?: number }) => {
      if (error?.code !== 48) throw error; // 48 NamespaceExists: kept when not dropping
    });
  }
  return { name, indexes: (json.indexes ?? []) as Document[] };
}
