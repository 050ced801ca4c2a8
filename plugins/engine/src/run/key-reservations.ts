import { Mutex } from '../store/mutex.js';

/** Picks a key given the keys others hold, and records it for this execution in the same step (the store does it). */
export type ReserveAcrossProcesses = (
  executionId: string,
  configIds: string[],
  pick: (takenElsewhere: Set<string>) => Promise<string>,
) => Promise<string>;

/**
 * Backup keys being written by runs that have not finished. Two runs of one job in the same second render the same
 * name; the storage does not know about a put that has not committed yet, so the engine remembers the keys it
 * handed out (here) and, through the store, the keys other processes' running executions recorded, picking and
 * recording in one locked step so two processes never take the same name.
 */
export class KeyReservations {
  private readonly keys = new Set<string>();
  private readonly mutex = new Mutex();

  constructor(private readonly reserveAcross: ReserveAcrossProcesses) {}

  /** Runs `pick` (which must return a key for which `isTaken` is false) alone, and reserves its result. */
  async reserve(
    executionId: string,
    configIds: string[],
    pick: (isTaken: (key: string) => boolean) => Promise<string>,
  ): Promise<string> {
    return this.mutex.run(async () => {
      const key = await this.reserveAcross(executionId, configIds, (elsewhere) =>
        pick((candidate) => this.keys.has(candidate) || elsewhere.has(candidate)),
      );
      this.keys.add(key);
      return key;
    });
  }

  release(key: string): void {
    this.keys.delete(key);
  }
}
