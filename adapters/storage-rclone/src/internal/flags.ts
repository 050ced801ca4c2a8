/**
 * Extra flags users may pass: tuning only. Anything that reads or writes arbitrary files, runs commands, opens a
 * remote-control port or replaces the config (--config, --log-file, --password-command, --rc, --dump...) is refused.
 */
const ALLOWED = new Set([
  '--bwlimit',
  '--timeout',
  '--low-level-retries',
  '--tpslimit',
  '--tpslimit-burst',
  '--buffer-size',
  '--streaming-upload-cutoff',
  '--no-check-certificate',
  '--ca-cert',
  '--user-agent',
  '--use-mmap',
  '--fast-list',
  '--checkers',
  '--disable-http2',
  '--bind',
  '--multi-thread-streams',
  '--multi-thread-cutoff',
]);

/** Per-backend tuning flags, e.g. --s3-chunk-size, --drive-upload-cutoff, --webdav-pacer-min-sleep. */
const BACKEND_TUNING = /^--[a-z0-9]+-(?:chunk-size|upload-concurrency|upload-cutoff|copy-cutoff|pacer-min-sleep|storage-class|no-check-bucket|list-chunk|hard-delete|encoding)$/;

/** Why a flag is refused, or undefined when it may be passed. */
export function flagProblem(flag: string): string | undefined {
  const match = /^(--[a-z0-9-]+)(?:=([^\n\r\0]*))?$/.exec(flag);
  if (!match?.[1]) return `"${flag}" is not of the form --name or --name=value`;
  if (!ALLOWED.has(match[1]) && !BACKEND_TUNING.test(match[1])) return `${match[1]} is not an allowed flag`;
  return undefined;
}
