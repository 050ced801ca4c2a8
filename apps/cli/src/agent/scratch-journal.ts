// Scratch folders this agent made for test restores and has not removed yet, kept in its state directory. A test
// restore that dies with the agent (SIGKILL, host reboot) leaves its folder behind; the server cannot sweep the
// agent's disk, so the agent removes what the journal lists when it starts again (docs/agents.md "Test restores").
import { readFile, rm } from 'node:fs/promises';
import { basename, isAbsolute, join, normalize } from 'node:path';
import { writePrivate } from './agent-state.js';

/** A test restore scratch folder's name (the engine's `holdfast-test-restore-<tag>-XXXXXX`). */
const SCRATCH_FOLDER = /^holdfast-test-restore-[0-9a-f]{12}-[A-Za-z0-9]{6}$/;
const FILE = 'scratch-folders.json';

/** Whether `directory` is an absolute, normalized path to a scratch folder: the only kind the agent removes. */
export function isScratchFolder(directory: string): boolean {
  return isAbsolute(directory) && normalize(directory) === directory && SCRATCH_FOLDER.test(basename(directory));
}

export class ScratchJournal {
  private readonly file: string;
  /** Journal writes one after the other, so two calls never lose each other's entry. */
  private pending: Promise<unknown> = Promise.resolve();

  constructor(stateDir: string) {
    this.file = join(stateDir, FILE);
  }

  /** Records a folder just made. */
  add(directory: string): Promise<void> {
    return this.update((folders) => [...folders.filter((folder) => folder !== directory), directory]);
  }

  /** Forgets a folder that was removed. */
  remove(directory: string): Promise<void> {
    return this.update((folders) => folders.filter((folder) => folder !== directory));
  }

  /**
   * Removes every folder the journal lists (left by test restores of an earlier run of the agent) and empties it.
   * Call it before the agent connects: no test restore of this process can be using them. An entry that is not a
   * scratch folder path (a hand-edited file) is dropped without touching the disk. Returns the folders removed.
   */
  async sweep(): Promise<string[]> {
    const removed: string[] = [];
    await this.update(async (folders) => {
      const kept: string[] = [];
      for (const folder of folders.filter(isScratchFolder)) {
        try {
          await rm(folder, { recursive: true, force: true });
          removed.push(folder);
        } catch {
          kept.push(folder); // busy or not permitted now: tried again at the next start
        }
      }
      return kept;
    });
    return removed;
  }

  private update(change: (folders: string[]) => string[] | Promise<string[]>): Promise<void> {
    const next = this.pending.then(async () => {
      const folders = await change(await this.read());
      if (folders.length === 0) {
        await rm(this.file, { force: true });
        return;
      }
      // Replaced atomically, owner-only, as the agent's other state files: a crash leaves the old journal, never half.
      await writePrivate(this.file, JSON.stringify(folders));
    });
    this.pending = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<string[]> {
    try {
      const parsed: unknown = JSON.parse(await readFile(this.file, 'utf8'));
      return Array.isArray(parsed) ? parsed.filter((entry): entry is string => typeof entry === 'string') : [];
    } catch {
      return []; // absent, or unreadable: nothing to sweep
    }
  }
}
