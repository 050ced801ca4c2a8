// Which instant an archived piece of WAL is known to cover (docs/pitr.md, "The recoverable window"). A piece ends at a
// byte position; the window needs a time. The time a copy was made is not it: pg_receivewal receives a commit some
// milliseconds after the server acknowledged it to the client, so a commit can be acknowledged before the copy starts
// and still be missing from it. What is sound is a pairing of the server's WAL *insert* position with a local time read
// before asking for it: every commit acknowledged before that time is inserted at or below that position, so a piece
// reaching the position holds every such commit. Not the flush position: with `synchronous_commit = off` a commit is
// acknowledged before its WAL is flushed, and a piece dated by the flush position could lack it (slot.ts).

/** One reading: at local time `at` (taken before the query was sent) every commit the server had acknowledged lies at or below `lsn`. */
export interface FlushSample {
  at: number;
  lsn: bigint;
}

/** Readings kept: a receiver more than this many flush intervals behind falls back to the last claim. */
const MAX_SAMPLES = 512;

export class FlushClock {
  private readonly samples: FlushSample[] = [];
  private claimed: number | undefined;

  /** `claimed`: what an earlier piece of this stream was reported to cover (restored after a restart). */
  constructor(claimed?: number) {
    this.claimed = claimed;
  }

  /** Adds a reading; readings arrive in time order (the checkpoint seed may be older than all of them). */
  record(sample: FlushSample): void {
    this.samples.push(sample);
    this.samples.sort((a, b) => a.at - b.at);
    if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
  }

  /**
   * The newest instant a piece ending at `endLsn` covers: the newest reading at or below `endLsn`, never earlier than
   * what an earlier piece claimed (each piece holds everything the ones before it did). Undefined when nothing is
   * known (no reading that low and no earlier claim): the caller must not claim an instant then.
   */
  coveredAt(endLsn: bigint): number | undefined {
    const newest = this.newestReadingAtOrBelow(endLsn);
    const best = newest === undefined ? this.claimed : this.claimed === undefined ? newest : Math.max(newest, this.claimed);
    if (best !== undefined) this.claimed = best;
    return best;
  }

  /** The time of the newest reading at or below `endLsn`, claiming nothing (undefined when there is none). */
  newestReadingAtOrBelow(endLsn: bigint): number | undefined {
    let newest: number | undefined;
    for (const sample of this.samples) if (sample.lsn <= endLsn && (newest === undefined || sample.at > newest)) newest = sample.at;
    return newest;
  }

  /** What the newest piece was reported to cover, for the spool to remember across restarts. */
  get lastClaim(): number | undefined {
    return this.claimed;
  }
}
