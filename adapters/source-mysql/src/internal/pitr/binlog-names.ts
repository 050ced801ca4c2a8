// Binary log file names: `<basename>.<number>` (`mysql-bin.000042`), numbered one by one; the number grows past its
// six digits when it has to (`mysql-bin.1000000`), so names are ordered by number, not as text.

/** True for a binary log file name (not the index file, not a hidden spool file). */
export function isBinlogName(name: string): boolean {
  return /^[^.][^/]*\.\d{6,}$/.test(name);
}

/** The file's number (`mysql-bin.000042` -> 42). */
export function binlogNumber(name: string): number {
  const match = /\.(\d+)$/.exec(name);
  if (!match) throw new Error(`not a binary log name: ${name}`);
  return Number(match[1]);
}

/** The name `offset` files after `name`, in the same basename and digits. */
export function binlogAfter(name: string, offset = 1): string {
  const match = /^(.*\.)(\d+)$/.exec(name);
  if (!match) throw new Error(`not a binary log name: ${name}`);
  return `${match[1]}${String(Number(match[2]) + offset).padStart(match[2]!.length, '0')}`;
}

/** Sorts names oldest first. */
export function byBinlogNumber(a: string, b: string): number {
  return binlogNumber(a) - binlogNumber(b);
}

/** A position in the binary log as the contract carries it: `<file>:<byte offset>`. */
export function formatBinlogPosition(name: string, offset: number): string {
  return `${name}:${offset}`;
}
