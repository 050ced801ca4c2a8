import type { ScratchDatabaseServer } from '@holdfast/kernel';
import { scratchTag } from '../../test-restore/scratch-targets.js';

// The throwaway databases of a MySQL/MariaDB point-in-time test restore: `hf_testrestore_<tag>_<n>`, one per database
// of the base, where <tag> is the first 12 hex digits of the execution id (29 characters and the index: far inside
// MySQL's 64, and only letters, digits and `_`, which the replay tools take unquoted). Named apart from the ordinary
// test restore's `hf_test_restore_…`, so each sweep removes only what its own kind of run left.

export const MYSQL_SCRATCH_PREFIX = 'hf_testrestore_';
const MYSQL_SCRATCH_NAME = /^hf_testrestore_([0-9a-f]{12})_\d+$/;

/** The scratch databases of one test restore. */
export interface MysqlScratchDatabases {
  /** Database of the base -> the scratch database it is rebuilt in. */
  databases: Map<string, string>;
  label: string;
  /** Drops every one that exists (the restore may never have created one, or dropped it on failure); true once none is left. */
  drop(): Promise<boolean>;
}

/** Names a scratch database for each of `originals` on `server`; nothing is created yet (the restore creates each). */
export function mysqlScratchDatabases(scratch: ScratchDatabaseServer, serverName: string, executionId: string, originals: string[]): MysqlScratchDatabases {
  const databases = new Map(originals.map((name, index) => [name, `${MYSQL_SCRATCH_PREFIX}${scratchTag(executionId)}_${index}`]));
  const names = [...databases.values()];
  return {
    databases,
    label: `database${names.length > 1 ? 's' : ''} ${names.join(', ')} on ${serverName} (${scratch.server})`,
    drop: async () => {
      // Every one is attempted before the first failure is thrown: one that cannot be dropped keeps no other. Only
      // existing ones are dropped: an account may lack DROP on a name it never got to create (MySQL checks the
      // privilege even for DROP DATABASE IF EXISTS), and nothing is left to drop then.
      const failures: unknown[] = [];
      for (const name of names) {
        await (async () => {
          if (await scratch.databaseExists(name)) await scratch.dropDatabase(name);
        })().catch((error: unknown) => failures.push(error));
      }
      if (failures.length > 0) throw failures[0];
      for (const name of names) if (await scratch.databaseExists(name)) return false;
      return true;
    },
  };
}

/**
 * Drops scratch databases on `scratch`'s server that an earlier test restore interrupted by a crash left: only names
 * of this kind whose execution `tagEnded` finds in this installation's table, of the same job and ended, so a test
 * restore in progress, another job's or another installation's is never touched. Resolves what was dropped.
 */
export async function sweepMysqlScratch(scratch: ScratchDatabaseServer, serverName: string, tagEnded: (tag: string) => Promise<boolean>): Promise<string[]> {
  const dropped: string[] = [];
  for (const name of await scratch.listDatabases(MYSQL_SCRATCH_PREFIX)) {
    const tag = MYSQL_SCRATCH_NAME.exec(name)?.[1];
    if (!tag || !(await tagEnded(tag))) continue;
    await scratch.dropDatabase(name);
    dropped.push(`dropped database ${name} on ${serverName} left by an interrupted test restore`);
  }
  return dropped;
}
