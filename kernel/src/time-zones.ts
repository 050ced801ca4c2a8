/**
 * True for an IANA time zone name the runtime knows. UTC, the default zone, is answered without asking the runtime:
 * the check builds an `Intl.DateTimeFormat`, and a process's first one loads ICU's date data, about 8 MiB of resident
 * memory kept for good that a server whose zones are all UTC never needs (docs/benchmarks.md, "Session 13").
 */
export function isKnownTimeZone(zone: string): boolean {
  if (zone === 'UTC') return true;
  if (typeof zone !== 'string' || zone.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
