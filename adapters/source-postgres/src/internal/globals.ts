import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN, connectionArgs, scrub } from './connection.js';
import type { RestoreContext } from './restore.js';
import { startTool } from './tool-process.js';

/** Errors of a globals replay that only say the thing is there already (the restoring role, `postgres`...). */
const EXPECTED = /already exists/;

/**
 * Replays the SQL of `pg_dumpall --globals-only` with psql on the maintenance database. psql does not stop at an
 * error: a role that exists already fails its CREATE ROLE and its ALTER ROLE still applies the backed-up attributes
 * and password. Errors other than "already exists" become warnings of the restore; a failed connection fails it.
 */
export async function replayGlobals(context: RestoreContext, sql: Readable): Promise<void> {
  const { config, ssh, signal } = context;
  const args = ['-X', '-q', '-v', 'ON_ERROR_STOP=0', ...connectionArgs(config, config.maintenanceDatabase)];
  const tool = await startTool(config, ssh, 'psql', args, signal);
  tool.stdout.resume();
  try {
    await pipeline(sql, tool.stdin, { signal });
    const code = await tool.exited;
    const stderr = scrub(tool.stderrTail(), config);
    if (code !== 0) throw new AdapterError(ORIGIN, code === 2 ? 'TRANSIENT' : 'CONFIG', `replaying the globals with psql failed (exit ${String(code)}): ${stderr}`);
    const errors = stderr
      .split('\n')
      .map((line) => /ERROR:\s+(.*)$/.exec(line)?.[1])
      .filter((message): message is string => message !== undefined && !EXPECTED.test(message));
    for (const message of errors) context.warnings.push(`globals: ${message}`);
  } catch (error) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'replaying the globals was aborted');
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `replaying the globals failed: ${scrub(tool.stderrTail() || String(error), config)}`, { cause: error });
  } finally {
    await tool.stop();
  }
}
