import { access, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import type { CallFrame } from '@holdfast/agents/protocol';
import type { SourceAdapter } from '@holdfast/kernel';
import { isScratchFolder, type ScratchJournal } from './scratch-journal.js';

/** The only folder names the agent makes for a test restore (the engine's scratch folder names). */
const SCRATCH_PREFIX = /^holdfast-test-restore-[0-9a-f]{12}-$/;
/** Longest path or name a scratch call carries. */
const MAX_TEXT = 4096;

/**
 * A test restore's operation on this agent (docs/agents.md "Test restores"), on a fresh instance of the call's
 * source: throwaway databases on its database server (`database`), a scratch file in a throwaway folder on this
 * agent's disk (`file`, SQLite), or a reserved index on its server (`index`, Redis).
 *
 * The folder calls act only on what a test restore's scratch folder looks like: `scratchMakeFolder` makes one new
 * folder `holdfast-test-restore-<tag>-XXXXXX` below an absolute parent, and `scratchRemoveFolder` removes only an
 * absolute path with such a last name, so the server cannot use them to remove anything else of the agent's disk.
 * With a `journal`, the folders made and not yet removed are recorded, so the agent sweeps them at its next start
 * when it died during a test restore.
 */
export async function runScratchCall(frame: CallFrame, adapter: SourceAdapter, signal: AbortSignal, journal?: ScratchJournal): Promise<unknown> {
  const text = (key: string) => {
    const value = frame.options[key];
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TEXT || value.includes('\0')) throw new Error(`scratch call without a valid ${key}`);
    return value;
  };
  if (frame.method === 'scratchMakeFolder') return makeFolder(text('parent'), text('prefix'), journal);
  if (frame.method === 'scratchRemoveFolder') return removeFolder(text('directory'), journal);
  const scratch = adapter.scratch?.();
  if (!scratch) throw new Error('this source has no scratch databases on the agent');
  switch (frame.method) {
    case 'scratchFigures':
      return scratch.figures(text('database'), signal);
    case 'scratchIntegrityCheck':
      return scratch.integrityCheck(text('database'), signal);
    case 'scratchDropDatabase':
      if (scratch.placement === 'file') break;
      return scratch.dropDatabase(text('database'));
    case 'scratchListDatabases':
      if (scratch.placement !== 'database') break;
      return scratch.listDatabases(text('prefix'));
    case 'scratchDatabaseExists':
      if (scratch.placement !== 'database') break;
      return scratch.databaseExists(text('database'));
    case 'scratchReadOwner':
      if (scratch.placement !== 'index') break;
      return scratch.readOwner(text('database'));
    case 'scratchWriteOwner':
      if (scratch.placement !== 'index') break;
      return scratch.writeOwner(text('database'), text('owner'));
  }
  throw new Error(`${frame.method} does not apply to this source's scratch (${scratch.placement})`);
}

async function makeFolder(parent: string, prefix: string, journal: ScratchJournal | undefined): Promise<string> {
  if (!isAbsolute(parent)) throw new Error(`the scratch folder's parent must be an absolute path on the agent: ${parent}`);
  if (!SCRATCH_PREFIX.test(prefix)) throw new Error('not a test restore scratch folder name');
  await mkdir(parent, { recursive: true });
  const directory = await mkdtemp(join(normalize(parent), prefix));
  try {
    await journal?.add(directory);
  } catch (error) {
    // A folder the journal does not hold would outlive a crash unseen: it is not handed out.
    await rm(directory, { recursive: true, force: true });
    throw new Error(`the scratch folder could not be recorded in the agent's state directory: ${error instanceof Error ? error.message : String(error)}`);
  }
  return directory;
}

async function removeFolder(directory: string, journal: ScratchJournal | undefined): Promise<boolean> {
  if (!isScratchFolder(directory)) throw new Error('only a test restore scratch folder (holdfast-test-restore-...) is removed');
  await rm(directory, { recursive: true, force: true });
  const isGone = await access(directory).then(
    () => false,
    () => true,
  );
  if (isGone) await journal?.remove(directory);
  return isGone;
}
