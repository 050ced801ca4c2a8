const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * Parses the date column of a Unix (`Nov 24 08:25`, `Nov 24  2025`) or DOS (`11-24-26 08:25AM`) LIST line, read as
 * UTC (vsftpd's default; other servers may print local time, an error of hours that retention by day tolerates).
 * A Unix date without a year lies within the last six months; one that would be in the future is last year's.
 * Returns `undefined` for anything else (the caller asks MDTM instead).
 */
export function parseListDate(raw: string | undefined, now = new Date()): Date | undefined {
  const text = raw?.trim().replace(/\s+/g, ' ') ?? '';
  const unix = /^([A-Za-z]{3}) (\d{1,2}) (?:(\d{1,2}):(\d{2})|(\d{4}))$/.exec(text);
  if (unix) {
    const month = MONTHS.indexOf((unix[1] ?? '').toLowerCase());
    if (month < 0) return undefined;
    const day = Number(unix[2]);
    if (unix[5]) return new Date(Date.UTC(Number(unix[5]), month, day));
    const year = now.getUTCFullYear();
    const date = new Date(Date.UTC(year, month, day, Number(unix[3]), Number(unix[4])));
    if (date.getTime() > now.getTime() + 24 * 3600_000) date.setUTCFullYear(year - 1);
    return date;
  }
  const dos = /^(\d{2})-(\d{2})-(\d{2}|\d{4}) (\d{1,2}):(\d{2}) ?(AM|PM)?$/i.exec(text);
  if (dos) {
    const year = (dos[3] ?? '').length === 2 ? 2000 + Number(dos[3]) : Number(dos[3]);
    let hours = Number(dos[4]);
    const meridiem = dos[6]?.toUpperCase();
    if (meridiem === 'PM' && hours < 12) hours += 12;
    if (meridiem === 'AM' && hours === 12) hours = 0;
    return new Date(Date.UTC(year, Number(dos[1]) - 1, Number(dos[2]), hours, Number(dos[5])));
  }
  return undefined;
}
