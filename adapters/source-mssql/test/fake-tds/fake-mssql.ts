import { existsSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { readBak, writeBak, type FakeDatabase } from './bak-file.js';
import { parseLogin7, preloginResponse, requestedEncryption, type Login7 } from './login.js';
import { DONE_STATUS, done, envChange, loginAck, message, resultSet, type Cell, type Column } from './tokens.js';
import { Cursor, lex } from './tsql.js';
import { MessageReader, PACKET, sendMessage } from './wire.js';

export type { FakeDatabase } from './bak-file.js';

/** A failure the way SQL Server reports it: one or more ERROR tokens, the last usually "terminating abnormally". */
class ServerError extends Error {
  constructor(readonly errors: [number, string][]) {
    super(errors.map(([, text]) => text).join(' '));
  }
}

const SYSTEM_DATABASES = ['master', 'tempdb', 'model', 'msdb'];

/** What the fake answers for one statement. */
interface Reply {
  columns?: Column[];
  rows?: Cell[][];
  infos?: string[];
}

export interface FakeMssqlOptions {
  users?: Record<string, string>;
  productVersion?: string;
  edition?: string;
  dataPath?: string;
  logPath?: string;
}

/**
 * A labelled fake SQL Server: a TCP server on 127.0.0.1 speaking MS-TDS for what the adapter (through mssql and
 * tedious) sends: PRELOGIN (answered ENCRYPT_NOT_SUP: the client must run with encrypt:false), LOGIN7 with the
 * password checked (error 18456 otherwise), SQL batches answered with COLMETADATA/ROW/DONE, ERROR and INFO tokens,
 * and ATTENTION. Its BACKUP writes a `.bak` to the path in the statement (on this machine's disk, where the test
 * sshd serves it) and its RESTORE reads one back, so the transfer around them is real. Every statement is recorded.
 */
export class FakeMssqlServer {
  readonly databases = new Map<string, FakeDatabase>();
  /** Every SQL batch received, in order, verbatim. */
  readonly statements: string[] = [];
  /** Every LOGIN7 received (password included, so tests can check it was sent and matched). */
  readonly logins: Login7[] = [];
  /** Encryption byte of every PRELOGIN. */
  readonly prelogins: (number | undefined)[] = [];
  /** Number of ATTENTION messages (cancels) received. */
  attentions = 0;
  /** Milliseconds a BACKUP takes before it writes its file (to test cancelling one). */
  backupDelayMs = 0;
  /** File mode of the `.bak` BACKUP writes (the service account's umask on a real server). */
  backupFileMode = 0o644;
  productVersion: string;
  edition: string;
  private readonly users: Record<string, string>;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    options: FakeMssqlOptions,
  ) {
    this.users = options.users ?? { sa: 'Fake-Passw0rd!' };
    this.productVersion = options.productVersion ?? '16.0.4135.4';
    this.edition = options.edition ?? 'Developer Edition (64-bit)';
    this.dataPath = options.dataPath ?? '/var/opt/mssql/data/';
    this.logPath = options.logPath ?? '/var/opt/mssql/log/';
  }

  dataPath: string;
  logPath: string;

  static async start(options: FakeMssqlOptions = {}): Promise<FakeMssqlServer> {
    const server = net.createServer();
    const fake = new FakeMssqlServer(server, options);
    server.on('connection', (socket) => fake.serve(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Statements the adapter sent, without tedious's own `set ...` session setup after each login. */
  get adapterStatements(): string[] {
    return this.statements.filter((statement) => !/^set /i.test(statement));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  database(name: string): FakeDatabase | undefined {
    return this.databases.get(name) ?? [...this.databases.values()].find((db) => db.name.toLowerCase() === name.toLowerCase());
  }

  private get major(): number {
    return Number.parseInt(this.productVersion, 10);
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    let packetSize = 4096;
    let isLoggedIn = false;
    let pending: NodeJS.Timeout | undefined;
    const send = (tokens: Buffer[]) => sendMessage(socket, PACKET.TABULAR_RESULT, Buffer.concat(tokens), packetSize);
    const reader = new MessageReader((type, payload) => {
      const [major, minor, build] = this.productVersion.split('.').map(Number) as [number, number, number];
      if (type === PACKET.PRELOGIN) {
        this.prelogins.push(requestedEncryption(payload));
        sendMessage(socket, PACKET.TABULAR_RESULT, preloginResponse(major, minor, build), packetSize);
      } else if (type === PACKET.LOGIN7) {
        const login = parseLogin7(payload);
        this.logins.push(login);
        packetSize = Math.min(Math.max(login.packetSize || 4096, 512), 32_767);
        if (this.users[login.userName] === undefined || this.users[login.userName] !== login.password) {
          send([message('error', 18456, `Login failed for user '${login.userName}'.`, 14), done(DONE_STATUS.ERROR)]);
          return;
        }
        if (login.database && !this.database(login.database) && !SYSTEM_DATABASES.includes(login.database.toLowerCase())) {
          send([message('error', 4060, `Cannot open database "${login.database}" requested by the login. The login failed.`, 11), done(DONE_STATUS.ERROR)]);
          return;
        }
        isLoggedIn = true;
        send([
          envChange(1, login.database || 'master', 'master'),
          message('info', 5701, `Changed database context to '${login.database || 'master'}'.`),
          loginAck(major, minor, build),
          envChange(4, String(packetSize), '4096'),
          done(DONE_STATUS.FINAL),
        ]);
      } else if (type === PACKET.ATTENTION) {
        this.attentions++;
        // A request still running ends its response first (as far as it got: here nothing), then the
        // acknowledgment follows as its own message, a DONE with DONE_ATTN (MS-TDS 2.2.1.7, 3.3.5.7).
        if (pending) {
          clearTimeout(pending);
          pending = undefined;
          send([done(DONE_STATUS.FINAL)]);
        }
        send([done(DONE_STATUS.ATTN)]);
      } else if (type === PACKET.SQL_BATCH && isLoggedIn) {
        // ALL_HEADERS (2.2.5.3) starts with its own total length; the UCS-2 batch text follows.
        const text = payload.subarray(payload.readUInt32LE(0)).toString('utf16le');
        this.statements.push(text);
        const answer = () => {
          pending = undefined;
          send(this.answer(text));
        };
        if (this.backupDelayMs > 0 && /^BACKUP/i.test(text)) pending = setTimeout(answer, this.backupDelayMs);
        else answer();
      } else {
        send([message('error', 4002, `the fake SQL Server does not handle packet type 0x${type.toString(16)} here`, 16), done(DONE_STATUS.ERROR)]);
      }
    });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
  }

  /** Tokens answering one batch. */
  private answer(text: string): Buffer[] {
    try {
      const reply = this.execute(text);
      const tokens = (reply.infos ?? []).map((info) => message('info', 3014, info));
      if (reply.columns) {
        tokens.push(resultSet(reply.columns, reply.rows ?? []), done(DONE_STATUS.COUNT, reply.rows?.length ?? 0));
      } else tokens.push(done(DONE_STATUS.FINAL));
      return tokens;
    } catch (error) {
      const errors = error instanceof ServerError ? error.errors : [[102, (error as Error).message] as [number, string]];
      return [...errors.map(([number, text]) => message('error', number, text)), done(DONE_STATUS.ERROR)];
    }
  }

  private execute(text: string): Reply {
    if (/^set /i.test(text)) return {};
    const sql = text.trim();
    if (sql.startsWith("SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)) AS version, CAST(SERVERPROPERTY('Edition') AS nvarchar(128)) AS edition;")) {
      return { columns: [{ name: 'version', type: 'nvarchar' }, { name: 'edition', type: 'nvarchar' }], rows: [[this.productVersion, this.edition]] };
    }
    if (sql === "SELECT name, state_desc FROM sys.databases WHERE name NOT IN (N'master', N'tempdb', N'model', N'msdb') ORDER BY name;") {
      const names = [...this.databases.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
      return { columns: [{ name: 'name', type: 'nvarchar' }, { name: 'state_desc', type: 'nvarchar' }], rows: names.map((db) => [db.name, db.state]) };
    }
    if (sql.startsWith("SELECT CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000)) AS dataPath")) {
      return { columns: [{ name: 'dataPath', type: 'nvarchar' }, { name: 'logPath', type: 'nvarchar' }], rows: [[this.dataPath, this.logPath]] };
    }
    const cursor = new Cursor(lex(sql));
    if (cursor.take('word', 'BACKUP')) return this.backup(cursor);
    if (cursor.take('word', 'RESTORE')) return this.restore(cursor);
    if (cursor.take('word', 'ALTER')) return this.alter(cursor);
    throw new ServerError([[102, `Incorrect syntax: the fake SQL Server does not know the statement "${sql.slice(0, 80)}"`]]);
  }

  private requireDatabase(name: string, terminating?: string): FakeDatabase {
    const found = this.database(name);
    if (found) return found;
    const errors: [number, string][] = [[911, `Database '${name}' does not exist. Make sure that the name is entered correctly.`]];
    if (terminating) errors.push([3013, `${terminating} is terminating abnormally.`]);
    throw new ServerError(errors);
  }

  /** BACKUP DATABASE [name] TO DISK = N'path' WITH option, ... (names must be delimited: the adapter always quotes). */
  private backup(cursor: Cursor): Reply {
    cursor.expectWords('DATABASE');
    const name = cursor.expect('name');
    cursor.expectWords('TO', 'DISK');
    cursor.expect('punct', '=');
    const file = cursor.expect('string');
    const options = this.withOptions(cursor);
    const database = this.requireDatabase(name, 'BACKUP DATABASE');
    if (!options.has('FORMAT') || !options.has('INIT')) throw new ServerError([[3013, 'the fake expects WITH FORMAT, INIT (a fresh file per backup)']]);
    if (!existsSync(path.dirname(file)) || !statSync(path.dirname(file)).isDirectory()) {
      throw new ServerError([
        [3201, `Cannot open backup device '${file}'. Operating system error 3(The system cannot find the path specified.).`],
        [3013, 'BACKUP DATABASE is terminating abnormally.'],
      ]);
    }
    writeBak(file, database, this.major, this.backupFileMode);
    const pages = Math.ceil(database.pages.length / 8192);
    return {
      infos: [
        `Processed ${pages} pages for database '${database.name}', file '${database.files[0]?.logicalName ?? ''}' on file 1.`,
        `BACKUP DATABASE successfully processed ${pages} pages in 0.010 seconds (1.000 MB/sec).`,
      ],
    };
  }

  /** Options after WITH, as upper-case words (MOVE pairs collected separately). */
  private withOptions(cursor: Cursor, moves?: Map<string, string>): Set<string> {
    const options = new Set<string>();
    if (!cursor.take('word', 'WITH')) return options;
    do {
      const word = cursor.expect('word');
      options.add(word);
      if (word === 'MOVE') {
        const logical = cursor.expect('string');
        cursor.expectWords('TO');
        moves?.set(logical, cursor.expect('string'));
      } else if (word === 'NAME') {
        cursor.expect('punct', '=');
        cursor.expect('string');
      }
    } while (cursor.take('punct', ','));
    if (!cursor.atEnd()) throw new SyntaxError(`Incorrect syntax near '${cursor.peek()?.text}'`);
    return options;
  }

  private readBackup(file: string, statement: string) {
    try {
      return readBak(file);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? '2(The system cannot find the file specified.)' : '38(Reached the end of the file.)';
      throw new ServerError([
        [3201, `Cannot open backup device '${file}'. Operating system error ${reason}.`],
        [3013, `${statement} is terminating abnormally.`],
      ]);
    }
  }

  private restore(cursor: Cursor): Reply {
    const kind = cursor.expect('word');
    if (kind === 'HEADERONLY' || kind === 'FILELISTONLY') {
      cursor.expectWords('FROM', 'DISK');
      cursor.expect('punct', '=');
      const { header } = this.readBackup(cursor.expect('string'), `RESTORE ${kind}`);
      if (kind === 'HEADERONLY') {
        return {
          columns: [
            { name: 'BackupName', type: 'nvarchar' },
            { name: 'BackupType', type: 'int' },
            { name: 'DatabaseName', type: 'nvarchar' },
            { name: 'SoftwareVersionMajor', type: 'int' },
          ],
          rows: [[`Holdfast backup of ${header.databaseName}`, 1, header.databaseName, header.softwareVersionMajor]],
        };
      }
      return {
        columns: [
          { name: 'LogicalName', type: 'nvarchar' },
          { name: 'PhysicalName', type: 'nvarchar' },
          { name: 'Type', type: 'nvarchar' },
          { name: 'FileId', type: 'int' },
        ],
        rows: header.files.map((file, index) => [file.logicalName, file.physicalName, file.type, index + 1]),
      };
    }
    if (kind !== 'DATABASE') throw new SyntaxError(`Incorrect syntax near '${kind}'`);
    const name = cursor.expect('name');
    cursor.expectWords('FROM', 'DISK');
    cursor.expect('punct', '=');
    const file = cursor.expect('string');
    const moves = new Map<string, string>();
    const options = this.withOptions(cursor, moves);
    const { header, pages } = this.readBackup(file, 'RESTORE DATABASE');
    if (header.softwareVersionMajor > this.major) {
      throw new ServerError([[3169, 'The database was backed up on a server running a newer version.'], [3013, 'RESTORE DATABASE is terminating abnormally.']]);
    }
    const existing = this.database(name);
    if (existing && !options.has('REPLACE')) {
      throw new ServerError([
        [3154, `The backup set holds a backup of a database other than the existing '${existing.name}' database.`],
        [3013, 'RESTORE DATABASE is terminating abnormally.'],
      ]);
    }
    for (const logical of moves.keys()) {
      if (!header.files.some((item) => item.logicalName === logical)) {
        throw new ServerError([
          [3234, `Logical file '${logical}' is not part of database '${name}'. Use RESTORE FILELISTONLY to list the logical file names.`],
          [3013, 'RESTORE DATABASE is terminating abnormally.'],
        ]);
      }
    }
    const files = header.files.map((item) => ({ ...item, physicalName: moves.get(item.logicalName) ?? item.physicalName }));
    for (const item of files) {
      const owner = [...this.databases.values()].find((db) => db !== existing && db.files.some((other) => other.physicalName === item.physicalName));
      if (owner) {
        throw new ServerError([
          [1834, `The file '${item.physicalName}' cannot be overwritten.  It is being used by database '${owner.name}'.`],
          [3013, 'RESTORE DATABASE is terminating abnormally.'],
        ]);
      }
    }
    if (existing) this.databases.delete(existing.name);
    this.databases.set(name, { name, state: 'ONLINE', files, rows: header.rows, pages: Buffer.from(pages) });
    return { infos: [`RESTORE DATABASE successfully processed ${Math.ceil(pages.length / 8192)} pages in 0.010 seconds (1.000 MB/sec).`] };
  }

  /** ALTER DATABASE [name] SET SINGLE_USER WITH ROLLBACK IMMEDIATE | SET MULTI_USER. */
  private alter(cursor: Cursor): Reply {
    cursor.expectWords('DATABASE');
    const database = this.requireDatabase(cursor.expect('name'));
    cursor.expectWords('SET');
    const mode = cursor.expect('word');
    if (mode === 'SINGLE_USER') cursor.expectWords('WITH', 'ROLLBACK', 'IMMEDIATE');
    else if (mode !== 'MULTI_USER') throw new SyntaxError(`Incorrect syntax near '${mode}'`);
    database.state = 'ONLINE';
    return {};
  }
}
