import { AdapterError, type SourceScratch } from '@holdfast/kernel';
import type { CallMethod } from './call-frames.js';

/** Runs one scratch call on the agent; `feature` is what its hello must list (fails with "upgrade it" otherwise). */
export type ScratchCall = <T>(method: CallMethod, options: Record<string, unknown>, feature: 'scratch' | 'scratch-files', signal?: AbortSignal) => Promise<T>;

/**
 * The scratch of a source on an agent (docs/agents.md "Test restores"): every operation is a call the agent runs on a
 * fresh instance of its adapter. `local` is the server's own copy of the adapter's scratch: it says what the scratch
 * is (placement, counts, its refusals) without connecting. Server names are prefixed with the agent, as
 * `127.0.0.1:6379` on the agent is not the server's.
 *
 * - `database`: throwaway databases on the agent's database server.
 * - `file` (SQLite): the throwaway folder is made and removed by the agent, on its disk (`scratchMakeFolder`,
 *   `scratchRemoveFolder`); the restore writes the file there through the agent and the checks read it there.
 * - `index` (Redis): the reserved index on the agent's server; its owner key is read and written there too.
 *
 * File and index scratch need agents listing `scratch-files`; all of their calls ask for it, so an older agent fails
 * at the first one with the "upgrade it" message rather than with its own refusal of a placement it does not know.
 */
export function remoteScratch(local: SourceScratch, agentId: string, origin: string, call: ScratchCall): SourceScratch {
  const where = (server: string) => `agent ${agentId}: ${server}`;
  switch (local.placement) {
    case 'database':
      return {
        placement: 'database',
        counts: local.counts,
        server: where(local.server),
        figures: (database, signal) => call<Record<string, number>>('scratchFigures', { database }, 'scratch', signal),
        integrityCheck: (database, signal) => call<string | null>('scratchIntegrityCheck', { database }, 'scratch', signal),
        listDatabases: (prefix) => call<string[]>('scratchListDatabases', { prefix }, 'scratch'),
        databaseExists: (database) => call<boolean>('scratchDatabaseExists', { database }, 'scratch'),
        dropDatabase: (database) => call<void>('scratchDropDatabase', { database }, 'scratch'),
      };
    case 'file':
      return {
        placement: 'file',
        counts: local.counts,
        figures: (file, signal) => call<Record<string, number>>('scratchFigures', { database: file }, 'scratch-files', signal),
        integrityCheck: (file, signal) => call<string | null>('scratchIntegrityCheck', { database: file }, 'scratch-files', signal),
        folders: {
          create: (parent, prefix) => call<string>('scratchMakeFolder', { parent, prefix }, 'scratch-files'),
          remove: (directory) => call<boolean>('scratchRemoveFolder', { directory }, 'scratch-files'),
        },
      };
    case 'index':
      return {
        placement: 'index',
        counts: local.counts,
        server: where(local.server),
        figures: (database, signal) => call<Record<string, number>>('scratchFigures', { database }, 'scratch-files', signal),
        integrityCheck: (database, signal) => call<string | null>('scratchIntegrityCheck', { database }, 'scratch-files', signal),
        readOwner: (database) => call<string | null>('scratchReadOwner', { database }, 'scratch-files'),
        writeOwner: (database, owner) => call<void>('scratchWriteOwner', { database, owner }, 'scratch-files'),
        dropDatabase: (database) => call<void>('scratchDropDatabase', { database }, 'scratch-files'),
      };
    default:
      throw new AdapterError(origin, 'UNSUPPORTED', 'this scratch placement is not offered through an agent');
  }
}
