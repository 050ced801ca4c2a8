// TEST DOUBLE for the MySQL/MariaDB point-in-time route tests, registered by the tests, never shipped:
// `mysql-pitr-double`, a source whose `pointInTime()` has logKind `mysql-binlog`. Its change log is the scripted one
// of pitr-doubles.ts (the test writes the pieces), its `dump()` is a "base backup" whose stats list the databases the
// test sets, `listDatabases` answers the databases its config says exist on the server, and `restoreToPoint` records
// what the engine passed (reading the whole base stream and asking for the base's start segment, as a real restore
// does) instead of restoring anything.
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { AdapterError, defineSourceAdapter, inject, injectable, TOKENS, z, type DumpOptions, type SourceAdapter } from '@holdfast/sdk';
import type { BaseBackupHandle, BaseBackupInfo, BaseBackupStats, PointInTimeSupport, PointRestoreInput, PointRestoreResult } from '@holdfast/kernel';
import { scriptedLog } from './pitr-doubles.js';

/** The base backup the next dump reports, and the databases it lists. */
export const nextMysqlBase: { info?: BaseBackupInfo; databases: string[]; bytes: Buffer } = { databases: [], bytes: Buffer.from('-- dump with coordinates\n') };

/** What one `restoreToPoint` call received: the input without its functions, the base's bytes, the first segment. */
export interface RecordedPointRestore {
  input: Omit<PointRestoreInput, 'baseStream' | 'fetchSegment' | 'signal' | 'onProgress'>;
  baseText: string;
  startSegmentText: string | null;
  /** The `label` of the configuration whose instance restored (which server the new database went to). */
  server?: string;
}
export const mysqlRestores: RecordedPointRestore[] = [];

const doubleConfig = z.object({ existing: z.array(z.string()).default([]), listFails: z.boolean().default(false), label: z.string().optional() });

@injectable()
class MysqlPitrDoubleSource implements SourceAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof doubleConfig>) {}
  async check() {
    return { ok: true, message: 'mysql pitr double' };
  }
  async detectVersion() {
    return { version: '10.11.0-MariaDB' };
  }
  async listDatabases() {
    if (this.config.listFails) throw new AdapterError('source-mysql-pitr-double', 'TRANSIENT', 'connect ECONNREFUSED 127.0.0.1:3307');
    return this.config.existing;
  }
  async dump(_options: DumpOptions): Promise<BaseBackupHandle> {
    const info = nextMysqlBase.info;
    if (!info) throw new Error('test: nextMysqlBase.info not set');
    const done: Promise<BaseBackupStats> = Promise.resolve({ bytes: nextMysqlBase.bytes.length, databases: nextMysqlBase.databases, warnings: [], base: info });
    return { stream: Readable.from([nextMysqlBase.bytes]), done, extension: '.sql' };
  }
  async restore(): Promise<{ warnings: string[] }> {
    throw new AdapterError('source-mysql-pitr-double', 'UNSUPPORTED', 'the test double restores nothing');
  }
  pointInTime(): PointInTimeSupport {
    return {
      logKind: 'mysql-binlog',
      baseBackup: async () => {
        throw new Error('test double: the engine takes base backups through dump()');
      },
      openChangeLogStream: (options) => scriptedLog(options.streamId).open(options),
      restoreToPoint: async ({ baseStream, fetchSegment, signal: _signal, onProgress, ...input }): Promise<PointRestoreResult> => {
        const baseText = await text(baseStream);
        const first = await fetchSegment(input.base.startSegment);
        onProgress?.(`test double: replaying into ${input.database?.into ?? '(no database)'}`);
        mysqlRestores.push({ input, baseText, startSegmentText: first ? await text(first) : null, ...(this.config.label ? { server: this.config.label } : {}) });
        return { warnings: [], recoveredTo: new Date('2026-12-06T03:00:07Z') };
      },
    };
  }
}

/** Test-only MySQL/MariaDB point-in-time source (see file header). */
export const mysqlPitrDoubleSource = defineSourceAdapter({
  id: 'mysql-pitr-double',
  displayName: 'MySQL point-in-time source (test double)',
  configSchema: doubleConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: false, fileArchive: false },
  implementation: MysqlPitrDoubleSource,
});
