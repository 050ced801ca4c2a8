// The server side of the kit's MySQL/MariaDB point-in-time restore (`mysql-pitr`): the client programs it runs
// (`mariadb` or `mysql`, `mariadb-binlog` or `mysqlbinlog`; no Node driver, so the kit stays dependency-free), the
// connection (an option file in the private work folder: the password never appears on a command line), the
// questions asked before anything is written, and the two writes: the base's script, then the replayed binary log.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { EXIT, KitError } from './hfenc.mjs';

/** The first of `names` that runs (`--version`), in `binDir` when given, else on PATH. */
function findProgram(names, binDir) {
  for (const name of names) {
    const command = binDir ? join(binDir, name) : name;
    const probe = spawnSync(command, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    if (!probe.error && probe.status === 0) return { command, isMariadb: /mariadb/i.test(probe.stdout) };
  }
  return undefined;
}

/** The client and the binary log decoder; exit 11 naming what to install when one is missing. */
export function findPrograms(binDir) {
  const client = findProgram(['mariadb', 'mysql'], binDir);
  const decoder = findProgram(['mariadb-binlog', 'mysqlbinlog'], binDir);
  const where = binDir ? `in ${binDir}` : 'on PATH';
  if (!decoder) throw new KitError(EXIT.tools, `neither mariadb-binlog nor mysqlbinlog was found ${where}: install the MariaDB or MySQL client programs (Debian/Ubuntu: apt install mariadb-client) or pass --bin-dir <folder>`);
  if (!client) throw new KitError(EXIT.tools, `neither the mariadb nor the mysql client was found ${where}: install the MariaDB or MySQL client programs (Debian/Ubuntu: apt install mariadb-client) or pass --bin-dir <folder>`);
  return { client, decoder };
}

/** A value for an option file: double-quoted, with backslashes and quotes escaped. */
const optionValue = (value) => `"${String(value).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * Writes `<work>/client.cnf` (0600) with what the options say about the connection: the user's own
 * --defaults-extra-file is included first, so --host, --port, --user and --password-file given beside it win.
 */
export function writeClientOptions(work, connection) {
  const lines = [];
  if (connection.defaultsFile) {
    if (!existsSync(connection.defaultsFile)) throw new KitError(EXIT.io, `--defaults-extra-file ${connection.defaultsFile} does not exist`);
    lines.push(`!include ${resolve(connection.defaultsFile)}`);
  }
  lines.push('[client]');
  for (const name of ['host', 'port', 'socket', 'user']) if (connection[name] !== undefined) lines.push(`${name}=${optionValue(connection[name])}`);
  if (connection.passwordFile) {
    let password;
    try {
      password = readFileSync(connection.passwordFile, 'utf8').split(/\r?\n/)[0];
    } catch (error) {
      throw new KitError(EXIT.io, `cannot read --password-file ${connection.passwordFile}: ${error.code ?? error.message}`);
    }
    lines.push(`password=${optionValue(password)}`);
  }
  const file = join(work, 'client.cnf');
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

/** The client's ERROR lines (it echoes nothing else useful), or the tail of what it wrote. */
function errorText(stderr) {
  const errors = stderr.split('\n').filter((line) => line.startsWith('ERROR'));
  return (errors.length > 0 ? errors.join('; ') : stderr.trim()).slice(-2000);
}

/** A client with the option file first (it must be the first argument), then `args`. */
export function clientArgs(optionsFile, args) {
  return [`--defaults-extra-file=${optionsFile}`, ...args];
}

/** Runs one SQL text through the client; answers its rows (tab-separated fields). Throws the server's error (exit 10). */
export function query(client, optionsFile, sql) {
  const result = spawnSync(client.command, clientArgs(optionsFile, ['--batch', '--skip-column-names', '-e', sql]), { encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw new KitError(EXIT.server, `${client.command} could not run: ${result.error.message}`);
  if (result.status !== 0) {
    const error = new KitError(EXIT.server, errorText(result.stderr) || `${client.command} exited with ${result.status}`);
    error.errno = Number(/^ERROR (\d+)/m.exec(result.stderr)?.[1]);
    throw error;
  }
  return result.stdout.split('\n').filter((line) => line !== '').map((line) => line.split('\t'));
}

/** Whether a session statement is allowed (false when the account lacks the privilege: error 1227). */
export function isAllowed(client, optionsFile, statement) {
  try {
    query(client, optionsFile, statement);
    return true;
  } catch (error) {
    if (error.errno === 1227) return false;
    throw error;
  }
}

/** The client and decoder processes running now, so an interrupt can stop them at once. */
const running = new Set();

/** Kills every client and decoder process of the restore (SIGKILL: a client must not finish a half-sent statement). */
export function stopRunning() {
  for (const child of running) child.kill('SIGKILL');
}

/** Spawns a program, keeping the tail of its stderr; `closed` settles with its exit code. */
function start(command, args, env) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  running.add(child);
  child.once('close', () => running.delete(child));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => (stderr = (stderr + text).slice(-8192)));
  const closed = new Promise((resolveClose) => {
    child.once('error', (error) => resolveClose({ code: null, error }));
    child.once('close', (code, signal) => resolveClose({ code: code ?? signal }));
  });
  return { child, closed, stderr: () => stderr };
}

/** Loads `file` into `database` through the client; exit 10 with the client's ERROR lines when a statement fails. */
export async function loadScript(client, optionsFile, file, database, { outOfBinlog }) {
  const extra = outOfBinlog ? ['--init-command=SET SESSION sql_log_bin = 0'] : [];
  const loader = start(client.command, clientArgs(optionsFile, ['--binary-mode', '--batch', ...extra, `--database=${database}`]), process.env);
  loader.child.stdout.resume();
  // A whole file on disk: the client never sees a half-sent statement, so its input may simply end.
  const feeding = pipeline(createReadStream(file), loader.child.stdin).catch((error) => error);
  const { code, error } = await loader.closed;
  await feeding;
  if (code !== 0) throw new KitError(EXIT.server, `loading the base backup into "${database}" failed: ${error?.message ?? errorText(loader.stderr())}`);
}

/**
 * Replays: `decoder args | watch | client`, in one client session (a temporary table made in one file and used in
 * the next needs the same session). When the watch or the decoder fails, the client is killed before its input
 * closes: at the end of its input it would run a statement it holds without a delimiter.
 */
export async function replay(programs, optionsFile, decoderArgs, watch, database) {
  const decoder = start(programs.decoder.command, decoderArgs, { PATH: process.env.PATH, LANG: 'C.UTF-8', TZ: 'UTC' });
  const sink = start(programs.client.command, clientArgs(optionsFile, ['--binary-mode', '--batch', `--database=${database}`]), process.env);
  sink.child.stdout.resume();
  let failure;
  try {
    await pipeline(decoder.child.stdout, watch, async function* (source) {
      for await (const chunk of source) yield chunk;
      // The input is complete only if the decoder finished well: otherwise the client must not see its end.
      const { code, error } = await decoder.closed;
      if (code !== 0) throw new KitError(EXIT.server, `${programs.decoder.command} failed (exit ${code}): ${error?.message ?? decoder.stderr().trim().slice(-1500)}`);
    }, sink.child.stdin);
  } catch (error) {
    failure = error;
    sink.child.kill('SIGKILL');
    decoder.child.kill('SIGKILL');
  }
  const [{ code }] = await Promise.all([sink.closed, decoder.closed]);
  if (failure instanceof KitError) throw failure;
  if (failure || code !== 0) throw new KitError(EXIT.server, `replaying the binary log into "${database}" failed: ${errorText(sink.stderr()) || failure?.message}`);
}
