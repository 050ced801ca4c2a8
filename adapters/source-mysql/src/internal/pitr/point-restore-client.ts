// The `mariadb`/`mysql` client a point-in-time restore feeds: the base's script, then the replayed binary log.
// Unlike the ordinary restore's pipe, the input is written by hand so that a failing input kills the client before
// its standard input closes: at end of input the client runs a statement it holds without its delimiter, and a
// half-sent statement (the input failed in the middle of it) must never run.
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { AdapterError, isAbortError } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN, scrub } from '../connection.js';
import { startTool, type ToolProcess } from '../tool-process.js';
import { connectionArgs, writeOptionsFile, type ClientTools } from '../tools.js';

/** The client echoes a failing statement (possibly huge) before its ERROR line; keep the ERROR lines. */
function errorLines(stderr: string): string {
  const errors = stderr.split('\n').filter((line) => line.startsWith('ERROR'));
  return (errors.length > 0 ? errors.join('; ') : stderr).slice(-2000);
}

/** Writes `chunk`, waiting for room; rejects when the client exited meanwhile. */
async function writeTo(tool: ToolProcess, chunk: Buffer): Promise<void> {
  if (tool.stdin.write(chunk)) return;
  const exited = tool.exited.then((code) => {
    throw new Error(`the client exited (${String(code)}) while reading its input`);
  });
  await Promise.race([once(tool.stdin, 'drain'), exited]);
}

/**
 * Runs `input` through the client connected to the source's server, in `database`. Rejects with TRANSIENT (the
 * client's ERROR lines, scrubbed) when a statement fails, ABORTED when `signal` aborted, or the input's own error.
 */
export async function runSqlClient(config: MysqlSourceConfig, tools: ClientTools, input: Readable | AsyncIterable<Buffer>, database: string, signal: AbortSignal, what: string): Promise<void> {
  const options = await writeOptionsFile(config);
  const args = [...options.args, ...connectionArgs(config, tools), `--connect-timeout=${config.connectTimeoutSeconds}`, '--binary-mode', '--batch', `--database=${database}`];
  let tool: ToolProcess;
  try {
    tool = await startTool(config, undefined, tools.client, args, signal);
  } catch (error) {
    await options.remove();
    throw error;
  }
  tool.stdout.resume();
  try {
    for await (const chunk of input) await writeTo(tool, chunk as Buffer);
    tool.stdin.end();
    const code = await tool.exited;
    if (code !== 0) throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed (exit ${String(code)}): ${scrub(errorLines(tool.stderrTail()), config)}`);
  } catch (error) {
    // Killed first, then anything else: the client must not see the end of a half-sent statement.
    await tool.stop();
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`, { cause: error });
    if (error instanceof AdapterError) throw error;
    const detail = errorLines(tool.stderrTail()) || (error instanceof Error ? error.message : String(error));
    throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed: ${scrub(detail, config)}`, { cause: error });
  } finally {
    await tool.stop();
    await options.remove();
  }
}
