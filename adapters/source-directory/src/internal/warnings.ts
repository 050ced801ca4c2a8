/** Most warnings kept verbatim; a tree with thousands of unreadable files must not grow the stats without bound. */
const MAX_WARNINGS = 200;

/** Collects problems that did not stop the run; past the cap they are only counted. */
export class WarningList {
  private readonly kept: string[] = [];
  private dropped = 0;

  add(message: string): void {
    if (this.kept.length < MAX_WARNINGS) this.kept.push(message);
    else this.dropped++;
  }

  /** The kept warnings plus one line counting the rest. */
  list(): string[] {
    return this.dropped === 0 ? [...this.kept] : [...this.kept, `... and ${this.dropped} more warnings`];
  }
}
