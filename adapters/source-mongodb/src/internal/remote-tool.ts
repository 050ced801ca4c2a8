import path from 'node:path';
import { sshConnectError, startRemoteCommand, type RemoteProcess, type SshTarget } from '@holdfast/sdk';
import { mongoError, ORIGIN } from './errors.js';
import { toolConfigYaml, type ToolProcess } from './tools.js';

/** The environment variable that carries the `--config` YAML through the SDK's 0600 remote file. */
const CONFIG_VARIABLE = 'HOLDFAST_MONGO_TOOL_CONFIG';

/** Where the remote tool reads its `--config`: the pipe of the here-document below, never a file on disk. */
export const REMOTE_CONFIG_PATH = '/dev/fd/3';

/**
 * Run by the remote sh as `sh -c <this> sh <tool> <args...>`: moves the config from the environment into a pipe on
 * fd 3 (a here-document expands the variable at run time; its text never reaches argv), drops the variable, and
 * replaces itself with the tool. So the password is in no command line, in no file once the SDK's wrapper has
 * deleted its secret file, and not in the tool's environment.
 */
const RUN_WITH_CONFIG_PIPE = [
  `c=$${CONFIG_VARIABLE}; unset ${CONFIG_VARIABLE}; exec "$@" 3<<HOLDFAST_CONFIG_END`,
  '$c',
  'HOLDFAST_CONFIG_END',
  '',
].join('\n');

/** The path of a tool on the SSH host: `binDirectory/<name>` (a remote, POSIX path), else the name for its PATH. */
export function remoteToolPath(name: string, binDirectory?: string): string {
  return binDirectory ? path.posix.join(binDirectory, name) : name;
}

/** True when `<tool> --version` runs on the SSH host; an SSH login failure rejects (coded). */
export async function remoteToolRuns(ssh: SshTarget, tool: string): Promise<boolean> {
  const remote = await startRemoteCommand(ssh, { command: tool, args: ['--version'], signal: AbortSignal.timeout(30_000) }).catch((error: unknown) => {
    throw sshConnectError(ORIGIN, error);
  });
  remote.stdout.resume();
  remote.stdin.end();
  return (await remote.exited) === 0;
}

/**
 * Stops a remote tool once. When the signal aborted, the SDK already kills it (its own abort listener): a second,
 * concurrent kill() can wait on a helper channel of the closing connection, so it only waits for the exit; a tool
 * that exited needs nothing; otherwise the kill is bounded.
 */
function stopRemote(remote: RemoteProcess, signal: AbortSignal): () => Promise<void> {
  let isExited = false;
  void remote.exited.then(() => (isExited = true));
  return async () => {
    if (isExited) return;
    if (signal.aborted) {
      await Promise.race([remote.exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      return;
    }
    await Promise.race([remote.kill(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  };
}

/**
 * Starts `tool --config /dev/fd/3 <args>` on the SSH host with the connection string (password included) on fd 3;
 * the signal kills the remote process (the SDK kills every process of the run). A tool missing there exits 127,
 * reported as CONFIG.
 */
export async function startRemoteTool(ssh: SshTarget, tool: string, args: string[], uri: string, signal: AbortSignal): Promise<ToolProcess> {
  const secretEnv = { LANG: 'C.UTF-8', [CONFIG_VARIABLE]: toolConfigYaml(uri) };
  const remote = await startRemoteCommand(ssh, { command: 'sh', args: ['-c', RUN_WITH_CONFIG_PIPE, 'sh', tool, ...args], secretEnv, signal }).catch(
    (error: unknown) => {
      throw sshConnectError(ORIGIN, error);
    },
  );
  const exited = remote.exited.then((code) => {
    if (code === 127) throw mongoError('CONFIG', `${tool} was not found on ${ssh.host}; install the MongoDB Database Tools there or set binDirectory`);
    return code;
  });
  exited.catch(() => undefined);
  remote.stdin.on('error', () => undefined);
  return { stdout: remote.stdout, stdin: remote.stdin, stderrTail: remote.stderrTail, exited, stop: stopRemote(remote, signal) };
}
