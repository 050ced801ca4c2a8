import { readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { FakeMssqlServer } from './fake-tds/fake-mssql.js';
import { filesIn, removeAll, seedDatabase, sharedConfig, sshBackupDir, sshConfig, tempDir } from './helpers.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { host: 'sql.internal', user: 'holdfast', password: 'x', backupDirectory: '/var/opt/mssql/backup', sharedDirectory: '/mnt/mssql-backup' },
});

// No SQL Server can run here: the suites run against the labelled TDS fake (test/fake-tds/). Its BACKUP writes a
// real file on this machine, which the adapter reads from the "shared" directory or over SFTP from the test sshd.
const fake = await FakeMssqlServer.start();
afterAll(() => fake.stop());

let counter = 0;
interface Seeded {
  n: number;
  name: string;
  dir: string;
}

/** Checks shared by both transfer modes; database names carry `-`, `.`, a space and `]` on purpose. */
function suite(mode: 'shared directory' | 'SFTP', makeDir: () => Promise<string> | string, config: (dir: string) => Record<string, unknown>) {
  describeSourceAdapter<Seeded, Record<string, unknown>>(`source-mssql (${mode}) against a fake SQL Server speaking TDS (fake)`, {
    definition,
    seed: async () => {
      const n = ++counter;
      const name = `hf conf-${n}.db]x`;
      seedDatabase(fake, name);
      return { n, name, dir: await makeDir() };
    },
    config: (seeded) => config(seeded.dir),
    dumpOptions: (seeded) => ({ databases: [seeded.name] }),
    badConnectionConfig: { host: '127.0.0.1', port: 1, user: 'sa', password: 'x', encrypt: false, backupDirectory: '/tmp', sharedDirectory: '/tmp', connectTimeoutSeconds: 2 },
    restoreTarget: (seeded) => ({ database: `${seeded.name} restored` }),
    verify: async (restored, seeded) => {
      const original = fake.database(seeded.name)!;
      const copy = fake.database(restored.database!)!;
      expect(copy).toBeDefined();
      expect(copy.rows).toEqual(original.rows);
      expect(copy.pages.equals(original.pages)).toBe(true);
      expect(copy.files.map((file) => file.logicalName)).toEqual(original.files.map((file) => file.logicalName));
      // Moved next to the originals under the new name, never onto the original's files.
      expect(copy.files.map((file) => file.physicalName)).toEqual([
        `${fake.dataPath}hf_conf-${seeded.n}.db_x_restored_${original.files[0]!.logicalName}.mdf`,
        `${fake.logPath}hf_conf-${seeded.n}.db_x_restored_${original.files[1]!.logicalName}.ldf`,
      ]);
      // Neither the backup nor the restore upload is left in the backup directory.
      expect(filesIn(seeded.dir)).toEqual([]);
    },
    cleanup: async (seeded, restored) => {
      fake.databases.delete(seeded.name);
      if (restored?.database) fake.databases.delete(restored.database);
      await removeAll(seeded.dir);
    },
  });
}

suite('shared directory', () => tempDir('conf'), (dir) => sharedConfig(fake, dir));
suite('SFTP', () => sshBackupDir('conf'), (dir) => sshConfig(fake, dir));
