/**
 * A FAKE MongoDB server for tests only (no MongoDB server can run on this machine). It speaks the wire protocol
 * (test/fake-mongo-wire.ts) on 127.0.0.1 and answers exactly the commands the driver sends in these tests, with the
 * documented reply shapes and error codes (26 NamespaceNotFound, 48 NamespaceExists, 18 AuthenticationFailed,
 * 59 CommandNotFound). Data lives in memory; every command is recorded so tests can assert what the adapter sent.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Long, type Document } from 'mongodb';
import { decodeMessage, encodeReply, MessageSplitter, type Request } from './fake-mongo-wire.js';
import { cursorCommand, type CursorStore } from './fake-mongo-cursors.js';
import { ScramServer } from './fake-mongo-scram.js';

export { ScramServer };

export interface RecordedCommand {
  name: string;
  db: string;
  body: Document;
  /** Which protocol carried it: OP_QUERY for the legacy handshake, OP_MSG otherwise. */
  protocol: 'OP_QUERY' | 'OP_MSG';
}

export interface FakeCollection {
  options: Document;
  indexes: Document[];
  docs: Document[];
}

const ok = (extra: Document = {}): Document => ({ ...extra, ok: 1 });
const fail = (code: number, codeName: string, errmsg: string): Document => ({ ok: 0, code, codeName, errmsg });

export class FakeMongoServer {
  readonly commands: RecordedCommand[] = [];
  /** database -> collection -> data. */
  readonly data = new Map<string, Map<string, FakeCollection>>();
  readonly users = new Map<string, Document[]>();
  readonly roles = new Map<string, Document[]>();
  readonly cursors: CursorStore = new Map();
  /** Commands answered with this error once (name -> reply), for failure tests. */
  readonly faults = new Map<string, Document>();
  /** The one user the fake accepts (SCRAM-SHA-256); without it every login is refused. */
  scram?: ScramServer;
  port = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  static async start(): Promise<FakeMongoServer> {
    const fake = new FakeMongoServer();
    fake.server = createServer((socket) => fake.serve(socket));
    await new Promise<void>((resolve) => fake.server!.listen(0, '127.0.0.1', resolve));
    fake.port = (fake.server.address() as { port: number }).port;
    return fake;
  }

  get uri(): string {
    return `mongodb://127.0.0.1:${this.port}/?directConnection=true`;
  }

  /** Client connections open right now (the SSH tests check that none outlives a run). */
  get openConnections(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  collection(db: string, name: string, create = false): FakeCollection | undefined {
    let database = this.data.get(db);
    if (!database && create) this.data.set(db, (database = new Map()));
    let coll = database?.get(name);
    if (!coll && create) database!.set(name, (coll = { options: {}, indexes: [{ v: 2, key: { _id: 1 }, name: '_id_' }], docs: [] }));
    return coll;
  }

  /** Names of the commands the adapter's client sent (handshakes and monitoring included), in order. */
  names(filter: (command: RecordedCommand) => boolean = () => true): string[] {
    return this.commands.filter(filter).map((command) => command.name);
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const splitter = new MessageSplitter();
    socket.on('data', (chunk) => {
      for (const message of splitter.push(chunk)) {
        const request = decodeMessage(message);
        socket.write(encodeReply(request, this.answer(request)));
      }
    });
  }

  private answer(request: Request): Document {
    const name = Object.keys(request.body)[0] ?? '';
    const db = String(request.body.$db ?? request.namespace?.split('.')[0] ?? 'admin');
    this.commands.push({ name, db, body: request.body, protocol: request.opCode === 2004 ? 'OP_QUERY' : 'OP_MSG' });
    const fault = this.faults.get(name);
    if (fault) {
      this.faults.delete(name);
      return fault;
    }
    return this.run(name, db, request);
  }

  private run(name: string, db: string, request: Request): Document {
    const body = request.body;
    const target = String(body[name] ?? '');
    switch (name) {
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return ok({
          helloOk: true,
          ismaster: true,
          isWritablePrimary: true,
          maxBsonObjectSize: 16 * 1024 * 1024,
          maxMessageSizeBytes: 48_000_000,
          maxWriteBatchSize: 100_000,
          localTime: new Date(),
          logicalSessionTimeoutMinutes: 30,
          connectionId: this.commands.length,
          minWireVersion: 0,
          maxWireVersion: 21,
          readOnly: false,
          ...(body.saslSupportedMechs ? { saslSupportedMechs: ['SCRAM-SHA-256'] } : {}),
        });
      case 'saslStart':
        return this.scram ? this.scram.start(body) : fail(18, 'AuthenticationFailed', 'Authentication failed.');
      case 'saslContinue':
        return this.scram ? this.scram.continue(body) : fail(18, 'AuthenticationFailed', 'Authentication failed.');
      case 'ping':
      case 'endSessions':
        return ok();
      case 'buildInfo':
        return ok({ version: '7.0.12', versionArray: [7, 0, 12, 0], gitVersion: 'fake', modules: [], bits: 64, maxBsonObjectSize: 16 * 1024 * 1024 });
      case 'listDatabases':
        return ok({ databases: [...new Set(['admin', 'config', 'local', ...this.data.keys()])].map((n) => ({ name: n, sizeOnDisk: 8192, empty: false })), totalSize: 8192 });
      case 'create': {
        if (this.collection(db, target)) return fail(48, 'NamespaceExists', `Collection ${db}.${target} already exists.`);
        const { create: _c, $db: _d, lsid: _l, $clusterTime: _t, ...options } = request.exact;
        this.collection(db, target, true)!.options = options;
        return ok();
      }
      case 'drop':
        if (!this.data.get(db)?.delete(target)) return fail(26, 'NamespaceNotFound', 'ns not found');
        return ok({ nIndexesWas: 1, ns: `${db}.${target}` });
      case 'insert': {
        const docs = request.sequences.documents ?? (request.exact.documents as Document[]);
        this.collection(db, target, true)!.docs.push(...docs);
        return ok({ n: docs.length });
      }
      case 'createIndexes': {
        const coll = this.collection(db, target, true)!;
        const before = coll.indexes.length;
        for (const index of body.indexes as Document[]) if (!coll.indexes.some((i) => i.name === index.name)) coll.indexes.push({ v: 2, ...index });
        return ok({ numIndexesBefore: before, numIndexesAfter: coll.indexes.length, createdCollectionAutomatically: false });
      }
      case 'usersInfo':
        return ok({ users: this.users.get(db) ?? [] });
      case 'rolesInfo':
        return ok({ roles: this.roles.get(db) ?? [] });
      case '_mergeAuthzCollections':
        return this.mergeAuthz(body);
    }
    const cursorReply = cursorCommand(this, name, db, body);
    return cursorReply ?? fail(59, 'CommandNotFound', `no such command: '${name}'`);
  }

  private mergeAuthz(body: Document): Document {
    const read = (ns: string) => this.collection('admin', ns.replace(/^admin\./, ''))?.docs ?? [];
    for (const user of read(String(body.tempUsersCollection))) {
      const list = this.users.get(String(user.db)) ?? [];
      this.users.set(String(user.db), [...list.filter((u) => u.user !== user.user), user]);
    }
    for (const role of read(String(body.tempRolesCollection))) {
      const list = this.roles.get(String(role.db)) ?? [];
      this.roles.set(String(role.db), [...list.filter((r) => r.role !== role.role), role]);
    }
    return ok();
  }
}

export { Long };
