import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { connectSsh, type SshTarget } from './ssh-connection.js';

/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** What to run remotely. `secretEnv` reaches the command's environment through a 0600 file, never its argv. */
export interface RemoteCommand {
  command: string;
  args: string[];
  secretEnv?: Readonly<Record<string, string>>;
  signal: AbortSignal;
}

/** A command running on the remote host, shaped like a local child process. */
export interface RemoteProcess {
  stdout: Readable;
  stdin: Writable;
  /** The last few KiB of the command's stderr. */
  stderrTail(): string;
  /** Resolves with the exit code (null when killed); 127 means the command was not found. */
  exited: Promise<number | null>;
  /** Kills the remote process (SIGKILL) and closes the connection. */
  kill(): Promise<void>;
}

function exec(client: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) => client.exec(command, (error, channel) => (error ? reject(error) : resolve(channel))));
}

/** Runs a short helper command and answers its stdout; `input` goes to its stdin. */
async function execCollect(client: Client, command: string, input = ''): Promise<string> {
  const channel = await exec(client, command);
  let out = '';
  channel.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  channel.stderr.resume();
  channel.end(input);
  const [code] = (await once(channel, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`remote helper failed (exit ${String(code)})`);
  return out;
}

/** Writes the secrets as `export` lines into a fresh 0600 file on the remote host and answers its path. */
async function writeSecretFile(client: Client, env: Readonly<Record<string, string>>): Promise<string> {
  const lines = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid environment variable name ${name}`);
    return `export ${name}=${shellQuote(value)}\n`;
  });
  // The secrets travel on stdin; only the file's path ever appears in a command line.
  return (await execCollect(client, 'umask 077 && f=$(mktemp) && cat > "$f" && printf %s "$f"', lines.join(''))).trim();
}

/**
 * The wrapper run by the remote sh: reports its pid on stderr (so a kill can target it), loads and deletes the
 * secret file, then replaces itself with the command.
 */
const WRAPPER = 'echo "HFPID $$" >&2; if [ -n "$1" ]; then . "$1"; rm -f "$1"; fi; shift; exec "$@"';

/**
 * Starts `command` on the remote host over SSH: stdout streams back, stdin streams in. Aborting the signal (or
 * `kill()`) kills the remote process, not only the channel: OpenSSH does not forward signals of exec channels, so
 * the wrapper's pid is killed over a second channel.
 */
export async function startRemoteCommand(target: SshTarget, remote: RemoteCommand): Promise<RemoteProcess> {
  const client = await connectSsh(target);
  let secretFile = '';
  let channel: ClientChannel;
  try {
    if (remote.secretEnv && Object.keys(remote.secretEnv).length > 0) secretFile = await writeSecretFile(client, remote.secretEnv);
    const line = ['sh', '-c', WRAPPER, 'sh', secretFile, remote.command, ...remote.args].map(shellQuote).join(' ');
    channel = await exec(client, line);
  } catch (error) {
    if (secretFile) await execCollect(client, `rm -f ${shellQuote(secretFile)}`).catch(() => undefined);
    client.end();
    throw error;
  }

  let pid: number | undefined;
  let stderrHead = '';
  let tail = '';
  channel.stderr.setEncoding('utf8');
  channel.stderr.on('data', (text: string) => {
    if (pid === undefined) {
      stderrHead += text;
      const match = /^HFPID (\d+)\n/.exec(stderrHead);
      if (!match) return;
      pid = Number(match[1]);
      text = stderrHead.slice(match[0].length);
    }
    tail = (tail + text).slice(-8192);
  });
  let exitCode: number | null = null;
  let isClosed = false;
  channel.on('exit', (code: number | null) => (exitCode = code));
  const exited = new Promise<number | null>((resolve) => {
    const finish = () => {
      if (isClosed) return;
      isClosed = true;
      client.end();
      resolve(exitCode);
    };
    channel.once('close', finish);
    client.once('close', finish);
  });

  const kill = async () => {
    if (isClosed) return;
    // sshd gives every exec channel its own session: killing that session also ends what the command started
    // (a shell that did not exec its last command, a pipeline). Plain `kill` covers hosts without pkill.
    if (pid !== undefined) {
      const killSession = `sid=$(ps -o sid= -p ${pid} 2>/dev/null | tr -d ' '); [ -n "$sid" ] && pkill -KILL -s "$sid"; kill -KILL ${pid} 2>/dev/null; true`;
      await execCollect(client, killSession).catch(() => undefined);
    }
    if (secretFile) await execCollect(client, `rm -f ${shellQuote(secretFile)}`).catch(() => undefined);
    channel.close();
    // An unread channel never emits 'close' on its own; destroying it settles `exited`.
    channel.destroy();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
    client.end();
  };
  const onAbort = () => void kill();
  if (remote.signal.aborted) onAbort();
  else remote.signal.addEventListener('abort', onAbort, { once: true });
  void exited.then(() => remote.signal.removeEventListener('abort', onAbort));

  return { stdout: channel, stdin: channel, stderrTail: () => tail.trim(), exited, kill };
}
