/** Cursor commands of the FAKE MongoDB server: find/getMore/killCursors, listCollections, listIndexes. */
import { Binary, Long, type Document } from 'mongodb';
import type { FakeMongoServer } from './fake-mongo.js';

export type CursorStore = Map<string, { ns: string; docs: Document[]; position: number }>;

let nextCursor = 1000n;

function firstBatch(fake: FakeMongoServer, ns: string, docs: Document[], batchSize: number): Document {
  const batch = docs.slice(0, batchSize);
  let id = Long.ZERO;
  if (docs.length > batchSize) {
    id = Long.fromBigInt(nextCursor++);
    fake.cursors.set(id.toString(), { ns, docs, position: batchSize });
  }
  return { cursor: { firstBatch: batch, id, ns }, ok: 1 };
}

/** Answers a cursor command, or undefined when `name` is not one. */
export function cursorCommand(fake: FakeMongoServer, name: string, db: string, body: Document): Document | undefined {
  const target = String(body[name] ?? '');
  const batchSize = Number((body.cursor as Document | undefined)?.batchSize ?? body.batchSize ?? 101);
  switch (name) {
    case 'listCollections': {
      const colls = [...(fake.data.get(db) ?? new Map()).entries()].map(([collName, coll]) => ({
        name: collName,
        type: coll.options.viewOn ? 'view' : 'collection',
        options: coll.options,
        info: { readOnly: false, uuid: new Binary(Buffer.alloc(16, 1), 4) },
        idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
      }));
      return firstBatch(fake, `${db}.$cmd.listCollections`, colls, batchSize);
    }
    case 'listIndexes': {
      const coll = fake.collection(db, target);
      if (!coll) return { ok: 0, code: 26, codeName: 'NamespaceNotFound', errmsg: `ns does not exist: ${db}.${target}` };
      return firstBatch(fake, `${db}.${target}`, coll.indexes, batchSize);
    }
    case 'find': {
      const docs = fake.collection(db, target)?.docs ?? [];
      return firstBatch(fake, `${db}.${target}`, docs, Number(body.batchSize ?? 101));
    }
    case 'getMore': {
      const key = String(body.getMore);
      const cursor = fake.cursors.get(key);
      if (!cursor) return { ok: 0, code: 43, codeName: 'CursorNotFound', errmsg: `cursor id ${key} not found` };
      const size = Number(body.batchSize ?? 101);
      const nextBatch = cursor.docs.slice(cursor.position, cursor.position + size);
      cursor.position += size;
      const done = cursor.position >= cursor.docs.length;
      if (done) fake.cursors.delete(key);
      return { cursor: { nextBatch, id: done ? Long.ZERO : Long.fromString(key), ns: cursor.ns }, ok: 1 };
    }
    case 'killCursors': {
      const ids = (body.cursors as unknown[]).map(String);
      for (const id of ids) fake.cursors.delete(id);
      return { cursorsKilled: body.cursors, cursorsNotFound: [], cursorsAlive: [], cursorsUnknown: [], ok: 1 };
    }
  }
  return undefined;
}
