import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RestoreResult, SshTarget } from '@holdfast/sdk';
import { aborted, mongoError } from './errors.js';
import { REMOTE_CONFIG_PATH, startRemoteTool } from './remote-tool.js';
import { startTool, writeToolConfig, mongodumpArgs, mongorestoreArgs, type ToolProcess } from './tools.js';

/** Where a tool runs: its path, on the Holdfast host or (with `ssh`) on the SSH host. */
export interface ToolSite {
  path: string;
  ssh?: SshTarget;
}

/**
 * Starts a tool with the connection string in its `--config`: locally a 0600 file in a 0700 temp dir (removed by
 * `stop`), over SSH a pipe on fd 3 (see remote-tool.ts). `args` builds the arguments around the config path.
 */
async function launch(site: ToolSite, uri: string, args: (configPath: string) => string[], signal: AbortSignal): Promise<ToolProcess> {
  if (site.ssh) return startRemoteTool(site.ssh, site.path, args(REMOTE_CONFIG_PATH), uri, signal);
  const config = await writeToolConfig(uri);
  try {
    const proc = startTool(site.path, args(config.path), signal);
    return {
      ...proc,
      stop: async () => {
        await proc.stop();
        await config.remove();
      },
    };
  } catch (error) {
    await config.remove();
    throw error;
  }
}

/** Streams `mongodump --archive` stdout; a non-zero exit fails the dump with the (scrubbed) stderr tail. */
export async function* toolExport(
  site: ToolSite,
  uri: string,
  databases: string[],
  includeUsers: boolean,
  signal: AbortSignal,
  scrub: (text: string) => string,
): AsyncGenerator<Buffer> {
  const proc = await launch(site, uri, (config) => mongodumpArgs(config, databases, includeUsers), signal);
  try {
    for await (const chunk of proc.stdout) yield chunk as Buffer;
    const code = await proc.exited;
    if (signal.aborted) throw aborted('mongodump');
    if (code !== 0) throw mongoError('TRANSIENT', `mongodump exited with ${String(code)}: ${scrub(proc.stderrTail()).slice(-2000)}`);
  } finally {
    await proc.stop();
  }
}

/** Pipes the archive into `mongorestore --archive`; a non-zero exit fails the restore. */
export async function toolImport(
  site: ToolSite,
  uri: string,
  input: Readable,
  options: { mapping: Record<string, string>; drop: boolean; includeUsers: boolean; signal: AbortSignal },
  scrub: (text: string) => string,
): Promise<RestoreResult> {
  const proc = await launch(site, uri, (config) => mongorestoreArgs(config, options.mapping, options.drop, options.includeUsers), options.signal);
  // mongorestore logs to stderr; anything on stdout is read away so it can never block the tool (or its SSH channel).
  proc.stdout.resume();
  try {
    await pipeline(input, proc.stdin).catch(() => undefined);
    const code = await proc.exited;
    if (options.signal.aborted) throw aborted('mongorestore');
    if (code !== 0) throw mongoError('TRANSIENT', `mongorestore exited with ${String(code)}: ${scrub(proc.stderrTail()).slice(-2000)}`);
    return { warnings: [] };
  } finally {
    await proc.stop();
  }
}
