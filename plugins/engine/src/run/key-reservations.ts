import { Mutex } from '../store/mutex.js';

/**
 * Backup keys being written by runs that have not finished. Two runs of one job in the same second render the same
 * name; the storage does not know about a put that has not committed yet, so the engine remembers the keys it
 * handed out (here) and the keys other processes' running executions recorded in their metadata (`othersRunning`),
 * and picks names one run at a time.
 */
export class KeyReservations {
  private readonly keys = new Set<string>();
  private readonly mutex = new Mutex();

  constructor(private readonly othersRunning: () => Promise<Set<string>>) {}

  /** Runs `pick` (which must return a key for which `isTaken` is false) alone, and reserves its result. */
  async reserve(pick: (isTaken: (key: string) => boolean) => Promise<string>): Promise<string> {
    return this.mutex.run(async () => {
      const elsewhere = await this.othersRunning();
      const key = await pick((candidate) => this.keys.has(candidate) || elsewhere.has(candidate));
      this.keys.add(key);
      return key;
    });
  }

  release(key: string): void {
    this.keys.delete(key);
  }
}
