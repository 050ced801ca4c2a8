import { AdapterError, isAbortError, type DumpHandle, type SshTarget, toDumpHandle } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../config.js';
import { ORIGIN, scrub } from './connection.js';
import { DATA_SECTION_MARKER, encodeHeader, type DumpHeader } from './header.js';
import { startTool } from './tool-process.js';
import { connectionArgs, writeOptionsFile, type ClientTools } from './tools.js';

/** Flags of every data dump: one consistent InnoDB snapshot, with routines, events and triggers, binary-safe. */
const DATA_FLAGS = ['--single-transaction', '--quick', '--routines', '--events', '--triggers', '--hex-blob', '--default-character-set=utf8mb4'];

/**
 * Yields the output of one dump tool run. The process must exit 0: a dump that dies midway throws after its last
 * byte, so the consumer's stream errors instead of ending, and a truncated dump is never taken for a whole one.
 */
async function* toolOutput(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  args: string[],
  what: string,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const options = await writeOptionsFile(config, ssh);
  const tool = await startTool(config, ssh, tools.dump, [...options.args, ...connectionArgs(config, tools), ...args], signal).catch(async (error: unknown) => {
    await options.remove();
    throw error;
  });
  try {
    let isOptionsRemoved = false;
    for await (const chunk of tool.stdout) {
      // Output means the tool has read its options: the password file goes now, not when a long dump ends.
      if (!isOptionsRemoved) {
        isOptionsRemoved = true;
        await options.remove();
      }
      yield chunk as Buffer;
    }
    const code = await tool.exited;
    if (code !== 0) {
      throw new AdapterError(ORIGIN, signal.aborted ? 'ABORTED' : 'TRANSIENT', `${what} failed (exit ${String(code)}): ${scrub(tool.stderrTail(), config)}`);
    }
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`);
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed: ${scrub(tool.stderrTail() || String(error), config)}`, { cause: error });
  } finally {
    await tool.stop();
    await options.remove();
  }
}

/** The tool output sections: optional accounts, then the databases. */
async function* sections(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  header: DumpHeader,
  signal: AbortSignal,
  extraDataFlags: string[],
): AsyncGenerator<Buffer> {
  if (header.users) {
    // A separate run: accounts are not transactional anyway, and --insert-ignore makes them CREATE USER IF NOT EXISTS
    // without touching the data section's INSERTs.
    yield* toolOutput(config, ssh, tools, ['--system=users', '--insert-ignore'], 'mariadb-dump of the accounts', signal);
    yield Buffer.from(`\n${DATA_SECTION_MARKER}\n`, 'utf8');
  }
  const targets = header.mode === 'single' ? ['--', header.databases[0]!] : ['--databases', '--', ...header.databases];
  yield* toolOutput(config, ssh, tools, [...DATA_FLAGS, ...extraDataFlags, ...targets], `dump of ${header.databases.map((d) => `"${d}"`).join(', ')}`, signal);
}

/**
 * The whole backup. The header line rides with the tool's first chunk, so the stream's first byte means the tool
 * really produced output: a tool that fails at start rejects before any byte.
 */
async function* backupOutput(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  header: DumpHeader,
  signal: AbortSignal,
  extraDataFlags: string[],
): AsyncGenerator<Buffer> {
  let pendingHeader: Buffer | undefined = encodeHeader(header);
  for await (const chunk of sections(config, ssh, tools, header, signal, extraDataFlags)) {
    yield pendingHeader ? Buffer.concat([pendingHeader, chunk]) : chunk;
    pendingHeader = undefined;
  }
  if (pendingHeader) yield pendingHeader;
}

/**
 * Starts the dump and waits for its first byte from the tool, so a failure at start rejects here, before anything
 * is uploaded. One database gives a dump without CREATE DATABASE (restorable under any name); several give one
 * `--databases` script. `extraDataFlags` go to the data section's run (a point-in-time base asks for its binary log
 * coordinates there).
 */
export async function startDump(
  config: MysqlSourceConfig,
  ssh: SshTarget | undefined,
  tools: ClientTools,
  databases: string[],
  signal: AbortSignal,
  engineVersion: string,
  extraDataFlags: string[] = [],
): Promise<DumpHandle> {
  const header: DumpHeader = { version: 1, mode: databases.length === 1 ? 'single' : 'multi', databases, users: config.includeUsers };
  return toDumpHandle(backupOutput(config, ssh, tools, header, signal, extraDataFlags), { origin: ORIGIN, signal, databases, engineVersion, extension: '.sql' });
}
