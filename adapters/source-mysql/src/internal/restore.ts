import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, type RestoreResult, type RestoreTarget, type SshTarget } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { ORIGIN, scrub } from './connection.js';
import { requireCompletionLine } from './completion-check.js';
import { DatabaseRename } from './database-rename.js';
import { DATA_SECTION_MARKER, parseHeader, type DumpHeader } from './header.js';
import { splitAt } from './split-stream.js';
import { StagedRestore } from './staged-restore.js';
import { startTool } from './tool-process.js';
import { connectionArgs, writeOptionsFile, type ClientTools } from './tools.js';

const HEADER_LIMIT = 64 * 1024;
/** Accounts and grants are small; a section larger than this is not one Holdfast wrote. */
const ACCOUNTS_LIMIT = 64 * 1024 * 1024;

async function* withHead(head: Buffer, rest: Readable): AsyncGenerator<Buffer> {
  yield head;
  for await (const chunk of rest) yield chunk as Buffer;
}

/** The client echoes the failing statement (row data, possibly huge) before its ERROR line; keep the ERROR lines. */
function errorLines(stderr: string): string {
  const errors = stderr.split('\n').filter((line) => line.startsWith('ERROR'));
  return errors.length > 0 ? errors.join('; ') : stderr;
}

/** Feeds an SQL script into the `mariadb`/`mysql` client; rejects when the client reports an error. */
async function runClient(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  input: Readable,
  database: string | undefined,
  signal: AbortSignal,
  isForced = false,
  label = database,
): Promise<string> {
  const options = await writeOptionsFile(config, ssh);
  const args = [...options.args, ...connectionArgs(config, tools), `--connect-timeout=${config.connectTimeoutSeconds}`, '--binary-mode', '--batch'];
  if (database) args.push(`--database=${database}`);
  if (isForced) args.push('--force');
  const tool = await startTool(config, ssh, tools.client, args, signal).catch(async (error: unknown) => {
    await options.remove();
    throw error;
  });
  tool.stdout.resume();
  const what = label ? `restore into "${label}"` : 'restore';
  try {
    await pipeline(input, tool.stdin, { signal });
    const code = await tool.exited;
    if (code !== 0 && !isForced) throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed (exit ${String(code)}): ${scrub(errorLines(tool.stderrTail()), config)}`);
    return scrub(tool.stderrTail(), config);
  } catch (error) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`);
    if (error instanceof AdapterError) throw error;
    // The client died first (a failing statement): its stderr says why better than the broken pipe does.
    await tool.exited.catch(() => undefined);
    const detail = errorLines(tool.stderrTail()) || (error instanceof Error ? error.message : String(error));
    throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed: ${scrub(detail, config)}`, { cause: error });
  } finally {
    await tool.stop();
    await options.remove();
  }
}

/**
 * Restores a backup. A single-database dump goes into `target.database` (or its mapping, or its own name), created
 * when missing. A multi-database script recreates each database under its mapped name (default: its own). All or
 * nothing: the data goes into staging schemas swapped in when the whole script ran ({@link StagedRestore}).
 */
export async function restoreDump(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  stream: Readable,
  target: RestoreTarget,
  signal: AbortSignal,
  overwrite?: boolean,
): Promise<RestoreResult> {
  const staged = new StagedRestore({ config, ssh, tools }, overwrite);
  return staged.around(() => restoreStaged(config, ssh, tools, staged, stream, target, signal));
}

async function restoreStaged(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  staged: StagedRestore,
  stream: Readable,
  target: RestoreTarget,
  signal: AbortSignal,
): Promise<RestoreResult> {
  const first = await splitAt(stream, Buffer.from('\n'), HEADER_LIMIT);
  if (first.head.length === 0 && !first.isFound) throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is empty: nothing to restore');
  let header: DumpHeader | undefined;
  try {
    header = parseHeader(first.head.toString('utf8'));
  } catch (error) {
    throw new AdapterError(ORIGIN, 'CONFIG', (error as Error).message);
  }
  // A dump from elsewhere (no Holdfast header) is restored whole, as a single-database script.
  let data = header ? first.rest : Readable.from(withHead(first.isFound ? Buffer.concat([first.head, Buffer.from('\n')]) : first.head, first.rest));
  const warnings: string[] = [];
  if (header?.users) {
    const accounts = await splitAt(first.rest, Buffer.from(`\n${DATA_SECTION_MARKER}\n`), ACCOUNTS_LIMIT);
    if (!accounts.isFound) throw new AdapterError(ORIGIN, 'CONFIG', 'the accounts section of the backup has no end marker (truncated or not a Holdfast backup)');
    // Accounts the restoring user may not recreate (root's PROXY grant, system accounts) must not stop the data:
    // this section runs with --force and its errors become warnings.
    const stderr = await runClient(config, ssh, tools, Readable.from([accounts.head]), undefined, signal, true);
    warnings.push(...stderr.split('\n').filter((line) => line.startsWith('ERROR')).map((line) => `accounts: ${line}`));
    data = accounts.rest;
  }
  if (header) data = requireCompletionLine(data);
  if (header?.mode === 'multi') {
    // Each database of the script goes to the staging schema of its target (its mapped name, default its own).
    const toStaging: Record<string, string> = {};
    for (const name of header.databases) toStaging[name] = await staged.prepare(target.databaseMapping?.[name] ?? name, false);
    const input = data.pipe(new DatabaseRename(toStaging));
    data.once('error', (error: Error) => input.destroy(error));
    await runClient(config, ssh, tools, input, undefined, signal);
    return { warnings };
  }
  const original = header?.databases[0];
  const database = target.database ?? (original ? target.databaseMapping?.[original] : undefined) ?? Object.values(target.databaseMapping ?? {})[0] ?? original;
  if (!database) throw new AdapterError(ORIGIN, 'CONFIG', 'restore needs a target database name');
  const staging = await staged.prepare(database, true);
  await runClient(config, ssh, tools, data, staging, signal, false, database);
  return { warnings };
}
