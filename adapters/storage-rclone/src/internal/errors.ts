import { AdapterError, maskSecrets, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const RCLONE_ORIGIN = { kind: 'storage', id: 'rclone' } as const;

/** How an rclone process ended. */
export interface RcloneExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The tail of its stderr. */
  stderr: string;
}

/** rclone's documented exit codes 3 and 4: directory not found, file not found. */
const NOT_FOUND_EXITS = new Set([3, 4]);

const PATTERNS: [RegExp, AdapterErrorCode][] = [
  [/didn't find section in config file|unknown backend|couldn't find backend|unknown flag|unknown shorthand|invalid argument|parse error|failed to parse/i, 'CONFIG'],
  [/\b401\b|\b403\b|unauthori[sz]ed|forbidden|permission denied|access ?denied|authenticat|invalid_grant|SignatureDoesNotMatch|InvalidAccessKeyId|password/i, 'AUTH'],
  [/object not found|directory not found|doesn't exist|no such file|not found/i, 'NOT_FOUND'],
];

/** Removes secret values and inline `pass=`-style parameters from a message. */
export function redact(message: string, secrets: readonly string[]): string {
  return maskSecrets(message, secrets).replace(/((?:pass|password|secret|token|key|sas_url|credentials)[a-z_]*\s*=\s*)('[^']*'|"[^"]*"|[^,:\s]+)/gi, '$1***');
}

/** The line of rclone's stderr that says what failed, without the timestamp. */
function reasonOf(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\s+/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('NOTICE'));
  const failed = [...lines].reverse().find((line) => /^(Failed|ERROR|CRITICAL|Fatal)/i.test(line));
  return (failed ?? lines.at(-1) ?? 'no error output').slice(0, 500);
}

/** Maps a failed rclone run to an AdapterError; `what` names the operation. */
export function exitError(exit: RcloneExit, what: string, secrets: readonly string[]): AdapterError {
  const reason = reasonOf(exit.stderr);
  let code: AdapterErrorCode = 'TRANSIENT';
  if (exit.code !== null && NOT_FOUND_EXITS.has(exit.code)) code = 'NOT_FOUND';
  else code = PATTERNS.find(([pattern]) => pattern.test(reason))?.[1] ?? 'TRANSIENT';
  const how = exit.code === null ? `killed by ${exit.signal ?? 'a signal'}` : `exit code ${exit.code}`;
  return new AdapterError(RCLONE_ORIGIN, code, `${what}: rclone ${how}: ${redact(reason, secrets)}`);
}

/** True when rclone said the object is missing (or is a folder, which no key names). */
export function isMissing(exit: RcloneExit): boolean {
  return (exit.code !== null && NOT_FOUND_EXITS.has(exit.code)) || /is a directory or doesn't exist|object not found|not found/i.test(reasonOf(exit.stderr));
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(RCLONE_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string): AdapterError {
  return new AdapterError(RCLONE_ORIGIN, 'ABORTED', `${what} was aborted`);
}
