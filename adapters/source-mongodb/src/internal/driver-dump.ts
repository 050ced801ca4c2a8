import type { Document, MongoClient } from 'mongodb';
import { encodeDocument, encodeEjson, encodeJson, encodePreamble, FORMAT_VERSION } from './format.js';
import { aborted } from './errors.js';

/** What one driver export covers. */
export interface ExportPlan {
  databases: string[];
  includeUsers: boolean;
  batchSize: number;
  server: { version: string; edition: string };
  signal: AbortSignal;
}

/** Chunks handed on are about this size: one frame per chunk would cost a stream round per small document. */
const CHUNK = 256 * 1024;

/**
 * The export as a byte generator: per database its collections (options and indexes first, then every document as
 * the raw BSON the server sent) and, when asked, its users and roles. Reads cursor batch by batch, so memory stays
 * at one batch; closing the generator (abort, consumer gone) closes the open cursor.
 */
export async function* driverExport(client: MongoClient, plan: ExportPlan): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const add = (buffer: Buffer): boolean => {
    pending.push(buffer);
    pendingBytes += buffer.length;
    return pendingBytes >= CHUNK;
  };
  const flush = (): Buffer => {
    const out = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    return out;
  };
  let collections = 0;
  let documents = 0;
  add(encodePreamble());
  add(encodeJson('H', { format: 'holdfast-mongodb', version: FORMAT_VERSION, server: plan.server, createdAt: new Date().toISOString() }));
  for (const name of plan.databases) {
    const db = client.db(name);
    add(encodeJson('B', { name }));
    const infos = (await db.listCollections({}, { nameOnly: false }).toArray()) as Document[];
    // system.* collections belong to the server (users and roles come through usersInfo/rolesInfo instead).
    const wanted = infos.filter((info) => !String(info.name).startsWith('system.')).sort((a, b) => String(a.name).localeCompare(String(b.name)));
    for (const info of wanted) {
      if (plan.signal.aborted) throw aborted('dump');
      const isView = info.type === 'view';
      const indexes = isView ? [] : await db.collection(String(info.name)).listIndexes().toArray();
      collections += 1;
      add(encodeEjson('C', { name: info.name, type: info.type ?? 'collection', options: info.options ?? {}, indexes }));
      if (isView) continue;
      const cursor = db.collection(String(info.name)).find({}, { raw: true, batchSize: plan.batchSize });
      try {
        for await (const raw of cursor) {
          documents += 1;
          if (add(encodeDocument(raw as unknown as Buffer))) yield flush();
        }
      } finally {
        await cursor.close().catch(() => undefined);
      }
    }
    if (plan.includeUsers) {
      const users = await db.command({ usersInfo: 1, showCredentials: true, showCustomData: true });
      const roles = await db.command({ rolesInfo: 1, showPrivileges: true, showBuiltinRoles: false });
      add(encodeEjson('U', { users: users.users ?? [], roles: roles.roles ?? [] }));
    }
    if (pendingBytes > 0) yield flush();
  }
  add(encodeJson('Z', { databases: plan.databases, collections, documents }));
  yield flush();
}
