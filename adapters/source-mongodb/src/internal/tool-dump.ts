import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RestoreResult } from '@holdfast/sdk';
import { mongoError } from './errors.js';
import { startTool, writeToolConfig, mongodumpArgs, mongorestoreArgs } from './tools.js';

/** Streams `mongodump --archive` stdout; a non-zero exit fails the dump with the (scrubbed) stderr tail. */
export async function* toolExport(
  tool: string,
  uri: string,
  databases: string[],
  includeUsers: boolean,
  signal: AbortSignal,
  scrub: (text: string) => string,
): AsyncGenerator<Buffer> {
  const config = await writeToolConfig(uri);
  const proc = startTool(tool, mongodumpArgs(config.path, databases, includeUsers), signal);
  try {
    for await (const chunk of proc.stdout) yield chunk as Buffer;
    const code = await proc.exited;
    if (code !== 0) throw mongoError('TRANSIENT', `mongodump exited with ${String(code)}: ${scrub(proc.stderrTail()).slice(-2000)}`);
  } finally {
    await proc.stop();
    await config.remove();
  }
}

/** Pipes the archive into `mongorestore --archive`; a non-zero exit fails the restore. */
export async function toolImport(
  tool: string,
  uri: string,
  input: Readable,
  options: { mapping: Record<string, string>; drop: boolean; includeUsers: boolean; signal: AbortSignal },
  scrub: (text: string) => string,
): Promise<RestoreResult> {
  const config = await writeToolConfig(uri);
  const proc = startTool(tool, mongorestoreArgs(config.path, options.mapping, options.drop, options.includeUsers), options.signal);
  try {
    await pipeline(input, proc.stdin).catch(() => undefined);
    const code = await proc.exited;
    if (code !== 0) throw mongoError('TRANSIENT', `mongorestore exited with ${String(code)}: ${scrub(proc.stderrTail()).slice(-2000)}`);
    return { warnings: [] };
  } finally {
    await proc.stop();
    await config.remove();
  }
}
