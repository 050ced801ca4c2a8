/** What a naming pattern is rendered with. */
export interface NamingContext {
  jobName: string;
  databaseName?: string;
  /** Position of an incremental backup in its chain; empty or absent vanishes with one adjacent separator. */
  chain?: string;
  /** Moment of the run. */
  date: Date;
  /** IANA zone the date tokens are rendered in. */
  timezone: string;
}

/** Result of validating a pattern before it is saved. */
export type PatternValidation = { ok: true } | { ok: false; message: string };

/** Capabilities of a naming strategy (reserved; none yet). */
export type NamingCapabilities = Record<string, never>;

/** Renders file names. `render` is pure and returns a safe file name (no separators, no control characters). */
export interface NamingStrategy {
  render(pattern: string, context: NamingContext): string;
  validate(pattern: string): PatternValidation;
}
