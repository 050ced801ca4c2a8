import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { SshClient, SshExecChannel } from './ssh-client.js';
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

function exec(client: SshClient, command: string): Promise<SshExecChannel> {
  return new Promise((resolve, reject) => client.exec(command, (error, channel) => (error ? reject(error) : resolve(channel))));
}

/**
 * The exit status also travels as a last stderr line: under load OpenSSH sometimes closes an exec channel without
 * the exit-status message, and a command that succeeded must not then count as failed.
 */
const EXIT_LINE = /(?:^|\n)HFEXIT (\d+)\n$/;

/** Splits the exit line off a command's stderr. */
function splitExitLine(stderr: string): { code: number | null; rest: string } {
  const match = EXIT_LINE.exec(stderr);
  return match ? { code: Number(match[1]), rest: stderr.slice(0, match.index) } : { code: null, rest: stderr };
}

/** Runs a short helper command and answers its stdout; `input` goes to its stdin. */
async function execCollect(client: SshClient, command: string, input = ''): Promise<string> {
  const channel = await exec(client, `( ${command}
); printf 'HFEXIT %s\n' "$?" >&2`);
  let out = '';
  let err = '';
  let status: number | null = null;
  channel.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  channel.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString('utf8')).slice(-4096)));
  channel.on('exit', (code: number | null) => (status = code));
  channel.end(input);
  // A connection that closes first (or a server that sends no status) settles on 'close'.
  await new Promise<void>((resolve) => channel.once('close', () => resolve()));
  const code = status ?? splitExitLine(err).code;
  if (code !== 0) throw new Error(`remote helper failed (exit ${String(code)})`);
  return out;
}

/** Writes the secrets as `export` lines into a fresh 0600 file on the remote host and answers its path. */
async function writeSecretFile(client: SshClient, env: Readonly<Record<string, string>>): Promise<string> {
  const lines = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid environment variable name ${name}`);
    return `export ${name}=${shellQuote(value)}\n`;
  });
  // The secrets travel on stdin; only the file's path ever appears in a command line.
  return (await execCollect(client, 'umask 077 && f=$(mktemp) && cat > "$f" && printf %s "$f"', lines.join(''))).trim();
}

/**
 * The wrapper run by the remote sh: reports its pid on stderr (so a kill can target it), loads and deletes the
 * secret file, runs the command and reports its exit status as a last stderr line (see {@link EXIT_LINE}).
 */
const WRAPPER =
  'echo "HFPID $$" >&2; if [ -n "$1" ]; then . "$1"; rm -f "$1"; fi; shift; export HOLDFAST_REMOTE_RUN="$1"; shift; "$@"; s=$?; printf \'HFEXIT %s\\n\' "$s" >&2; exit "$s"';

/**
 * Kills every process of one run: those whose environment carries the run's marker (the command and whatever it
 * started inherit it). A bare pid could by then belong to another process (pids wrap quickly on a busy host), so
 * the pid and its session are used only where /proc cannot be read.
 */
function killRunScript(marker: string, pid: number | undefined): string {
  const byMarker = `for p in /proc/[0-9]*; do grep -qsxz 'HOLDFAST_REMOTE_RUN=${marker}' "$p/environ" && kill -KILL "\${p#/proc/}" 2>/dev/null; done`;
  if (pid === undefined) return `if [ -r /proc/self/environ ]; then ${byMarker}; fi; true`;
  const bySession = `sid=$(ps -o sid= -p ${pid} 2>/dev/null | tr -d ' '); [ -n "$sid" ] && pkill -KILL -s "$sid"; kill -KILL ${pid} 2>/dev/null`;
  return `if [ -r /proc/self/environ ]; then ${byMarker}; else ${bySession}; fi; true`;
}

/**
 * Starts `command` on the remote host over SSH: stdout streams back, stdin streams in. Aborting the signal (or
 * `kill()`) kills the remote process, not only the channel: OpenSSH does not forward signals of exec channels, so
 * the wrapper's pid is killed over a second channel.
 */
export async function startRemoteCommand(target: SshTarget, remote: RemoteCommand): Promise<RemoteProcess> {
  const client = await connectSsh(target);
  const marker = randomBytes(12).toString('hex');
  let secretFile = '';
  let channel: SshExecChannel;
  try {
    if (remote.secretEnv && Object.keys(remote.secretEnv).length > 0) secretFile = await writeSecretFile(client, remote.secretEnv);
    const line = ['sh', '-c', WRAPPER, 'sh', secretFile, marker, remote.command, ...remote.args].map(shellQuote).join(' ');
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
      const reported = splitExitLine(tail);
      tail = reported.rest;
      resolve(exitCode ?? reported.code);
    };
    channel.once('close', finish);
    client.once('close', finish);
  });

  let killing: Promise<void> | undefined;
  // One kill per run, however many callers (the abort listener and an explicit kill) ask for it.
  const kill = () => (killing ??= killOnce());
  const killOnce = async () => {
    if (isClosed) return;
    await Promise.race([execCollect(client, killRunScript(marker, pid)).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5000))]);
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
