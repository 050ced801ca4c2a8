#!/usr/bin/env node
// holdfast-decrypt: decrypts a Holdfast encrypted backup (format HFENC v1) and restores Holdfast seekable archives
// (`extract`), without Holdfast. Node.js >= 18, no dependencies beyond Node's own modules and the .mjs files next to
// this one. The formats are described in README.md. Memory stays flat whatever the backup size.
import { createReadStream, createWriteStream, existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { extractArchive } from './archive-extract.mjs';
import { EXIT, KitError, createDecrypter, readKey } from './hfenc.mjs';
import { checkDatabaseName, parseMysqlTarget, restoreMysqlToPoint } from './mysql-pitr.mjs';
import { restoreToPoint } from './pitr-restore.mjs';
import { parseTarget } from './pitr-settings.mjs';

const USAGE = `Usage: node holdfast-decrypt.mjs [options] <backup-file | ->
       node holdfast-decrypt.mjs extract [options] <archive> <output-folder>
       node holdfast-decrypt.mjs pitr [options] --base <base backup> --wal <folder> --out <data directory>
       node holdfast-decrypt.mjs mysql-pitr [options] --base <base backup> --binlogs <folder> --database <name>

Decrypts a Holdfast encrypted backup to standard output or to --out.

Options:
  --key-file <path>     file holding the key (64 hex characters or base64; lines starting with # are ignored)
                        without it the key is read from the HOLDFAST_KEY environment variable
  --out <path>          write here instead of standard output (refuses to overwrite unless --force)
  --force               overwrite --out if it exists
  --decompress <codec>  gzip, brotli, zstd or none; default: read from <backup-file>.meta.json when present, else none
  --help                show this text (extract --help, pitr --help, mysql-pitr --help: those commands)

Exit codes: 0 done, 2 usage or key format, 3 wrong key, 4 damaged or not a Holdfast file, 5 decompression failed,
6 file could not be read or written.`;

const EXTRACT_USAGE = `Usage: node holdfast-decrypt.mjs extract [options] <archive> <output-folder>

Restores a Holdfast seekable archive (<name>.hfa, or <name>.hfa.enc when encrypted) into a new or empty folder.
For an incremental archive, put every earlier archive of its chain in the same folder as <archive>: the newest
snapshot is restored from all of them. <archive>.index.json is used when present.

Options:
  --key-file <path>      key for encrypted archives (default: the HOLDFAST_KEY environment variable)
  --only <path>          restore only this file or folder (a path inside the archive, like var/www/index.html)
  --keep-special-modes   restore setuid, setgid and sticky bits (run as root: owners are restored with them)
  --help                 show this text

Members that would lead outside the output folder (symlinks resolving out of it, anything below a symlink of the
archive) are not restored, and setuid/setgid/sticky bits are dropped without --keep-special-modes; each is named.

Exit codes: 0 done, 2 usage or key format, 3 wrong key, 4 damaged archive or chain, 5 no zstd decoder available,
6 a file is missing or could not be written, 7 restored but members were refused or lost special bits (named above).`;

const PITR_USAGE = `Usage: node holdfast-decrypt.mjs pitr --key-file holdfast-key.txt --base <base backup> --wal <folder>
         (--target-time <ISO time with offset> | --target-lsn <X/Y> | --target-name <restore point> | --latest)
         --out <new data directory> [--start [--port <n>]] [--pg-bin <folder>] [--run-as <user>]

Restores a PostgreSQL base backup of a point-in-time job and its archived WAL to a point in time: the base is
decrypted, decompressed and unpacked into a new data directory, the WAL it needs (downloaded from pitr/<job id>/wal/
of a destination into --wal) is decrypted into <out>/holdfast-restore-wal/, and recovery settings make PostgreSQL
replay to the target and promote. <base>.meta.json next to the base is read when present.

Options:
  --key-file <path>     the kit's holdfast-key.txt (default: the HOLDFAST_KEY environment variable)
  --base <file>         the base backup (<name>.tar.zst.enc, .tar.gz.enc, ...)
  --wal <folder>        the downloaded WAL objects (the wal/ folder, its timeline folders, or the objects themselves)
  --target-time <time>  restore to this instant, with its offset: 2026-12-06T14:03:27+01:00 or 2026-12-06T13:03:27Z
  --target-lsn <X/Y>    restore to this WAL position
  --target-name <name>  restore to this restore point (pg_create_restore_point)
  --latest              restore everything the WAL holds
  --out <folder>        the new data directory (absent or empty); built in <out>.partial and renamed at the end
  --start               start PostgreSQL on it (pg_ctl of the base's major version) and wait until it has promoted
  --port <n>            the port PostgreSQL listens on (default: the base's postgresql.conf)
  --pg-bin <folder>     where pg_ctl and pg_waldump are (default: /usr/lib/postgresql/<major>/bin, then PATH)
  --run-as <user>       as root: the user the data directory is handed to and PostgreSQL runs as (default postgres)
  --help                show this text

Exit codes: 0 done, 2 usage or key format, 3 wrong key, 4 damaged file, 5 decompression failed or no zstd decoder,
6 a file could not be read or written (or --out is not empty), 8 the target lies outside what the base and WAL
reach, 9 WAL is missing (the start segment, or a gap), 10 PostgreSQL failed to start or recover (--start).`;

const MYSQL_PITR_USAGE = `Usage: node holdfast-decrypt.mjs mysql-pitr --key-file holdfast-key.txt --base <base backup> --binlogs <folder>
         --database <name> [--into <new name>]
         (--target-time <ISO time with offset> | --target-position <file>:<offset> | --target-gtid <d-s-n> | --latest)
         [--host <host>] [--port <n>] [--socket <path>] [--user <name>] [--password-file <file>]
         [--defaults-extra-file <file>] [--bin-dir <folder>] [--work-dir <folder>] [--print-only]

Restores one database of a MySQL/MariaDB base backup of a point-in-time job and its archived binary log to a point
in time, as a NEW database on a running server: the base and the binary log files it needs (downloaded from
pitr/<job id>/wal/ of a destination into --binlogs) are decrypted into a private work folder, the database is
created, the base's SQL loaded, and the binary log replayed with mariadb-binlog (or mysqlbinlog) from the base's
coordinates to the target, the database name rewritten. The work folder is removed at the end. Needs the mariadb
(or mysql) client and mariadb-binlog (or mysqlbinlog). <base>.meta.json next to the base is read when present.

Options:
  --key-file <path>        the kit's holdfast-key.txt (default: the HOLDFAST_KEY environment variable)
  --base <file>            the base backup (<name>.sql.zst.enc, ...)
  --binlogs <folder>       the downloaded binary log objects (the wal/ folder, its 00000001/ folder, or the objects)
  --database <name>        the database of the base to restore (as it was named on the backed-up server)
  --into <name>            the new database to build (default: --database, when the original is gone); must not exist
  --target-time <time>     restore every transaction committed before this instant's whole second, with its offset:
                           2026-12-06T14:03:27+01:00 or 2026-12-06T13:03:27Z (binary log times are whole seconds)
  --target-position <f:o>  stop before the event at this binary log position (mysql-bin.000042:1234)
  --target-gtid <d-s-n>    every transaction up to and including the one with this MariaDB GTID (0-1-352), none after
  --latest                 replay everything the archived binary log holds
  --host, --port, --socket, --user   the server to restore into (default: the client's own defaults)
  --password-file <file>   a file whose first line is the password (never on the command line)
  --defaults-extra-file <file>   a MySQL option file with the connection ([client] group); the options above win
  --bin-dir <folder>       where mariadb and mariadb-binlog are (default: PATH)
  --work-dir <folder>      where the private work folder is made (default: the system temp folder); it needs room
                           for the base's SQL and the binary log files up to the target
  --print-only             decrypt into the work folder and print the commands instead of running them (no
                           connection is made; the folder is left for you)
  --help                   show this text

Exit codes: 0 done, 2 usage, key format or a database the base does not hold, 3 wrong key, 4 damaged file,
5 decompression failed or no zstd decoder, 6 a file could not be read or written, or the --into database exists,
8 the target lies outside what the base and binary log reach, 9 a binary log file is missing (the base's start
file, or a gap), 10 the server refused (connection, privileges) or the load or replay failed (the new database is
dropped), 11 the client programs are missing, 130 interrupted (Ctrl-C, SIGTERM: the new database dropped and
the work folder removed).`;

const DECOMPRESSORS = {
  gzip: () => zlib.createGunzip(),
  brotli: () => zlib.createBrotliDecompress(),
  zstd: () => {
    if (typeof zlib.createZstdDecompress !== 'function') {
      throw new KitError(EXIT.usage, 'zstd needs Node.js 22.15 or newer; or use --decompress none and pipe into `zstd -d`');
    }
    return zlib.createZstdDecompress();
  },
};

/** Codec from the sidecar (`compression: "GZIP"` or `compression: { codec: "GZIP" }`), or undefined. */
function codecFromSidecar(file) {
  const path = `${file}.meta.json`;
  if (file === '-' || !existsSync(path)) return undefined;
  try {
    const meta = JSON.parse(readFileSync(path, 'utf8'));
    const raw = typeof meta.compression === 'string' ? meta.compression : meta.compression?.codec;
    if (typeof raw !== 'string') return undefined;
    const codec = raw.toLowerCase();
    if (codec !== 'none') process.stderr.write(`holdfast-decrypt: ${path} says the backup is ${codec}-compressed; decompressing\n`);
    return codec;
  } catch (error) {
    process.stderr.write(`holdfast-decrypt: ignoring unreadable sidecar ${path}: ${error.message}\n`);
    return undefined;
  }
}

// Hand-written rather than util.parseArgs, which early Node 18 releases lack.
const DECRYPT_OPTIONS = { values: new Set(['key-file', 'out', 'decompress']), flags: new Set(['force', 'help']) };
const EXTRACT_OPTIONS = { values: new Set(['key-file', 'only']), flags: new Set(['help', 'keep-special-modes']) };
const PITR_OPTIONS = {
  values: new Set(['key-file', 'base', 'wal', 'out', 'target-time', 'target-lsn', 'target-name', 'port', 'pg-bin', 'run-as']),
  flags: new Set(['latest', 'start', 'help']),
};
const MYSQL_PITR_OPTIONS = {
  values: new Set(['key-file', 'base', 'binlogs', 'database', 'into', 'target-time', 'target-position', 'target-gtid', 'host', 'port', 'socket', 'user', 'password-file', 'defaults-extra-file', 'bin-dir', 'work-dir']),
  flags: new Set(['latest', 'print-only', 'help']),
};

function parseOptions(argv, spec, usage) {
  const values = {};
  const positionals = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      values.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s);
    if (spec.flags.has(name) && inline === undefined) values[name] = true;
    else if (spec.values.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined || value === '') throw new KitError(EXIT.usage, `--${name} needs a value\n\n${usage}`);
      values[name] = value;
    } else throw new KitError(EXIT.usage, `unknown option ${arg}\n\n${usage}`);
  }
  return { values, positionals };
}

function parseDecryptCommand(argv) {
  const { values, positionals } = parseOptions(argv, DECRYPT_OPTIONS, USAGE);
  if (values.help) return { help: USAGE };
  if (positionals.length !== 1) throw new KitError(EXIT.usage, `give exactly one backup file\n\n${USAGE}`);
  const decompress = values.decompress?.toLowerCase();
  if (decompress !== undefined && decompress !== 'none' && !(decompress in DECOMPRESSORS)) {
    throw new KitError(EXIT.usage, `--decompress must be gzip, brotli, zstd or none, not "${values.decompress}"`);
  }
  return { file: positionals[0], keyFile: values['key-file'], out: values.out, force: values.force === true, decompress };
}

function parseExtractCommand(argv) {
  const { values, positionals } = parseOptions(argv, EXTRACT_OPTIONS, EXTRACT_USAGE);
  if (values.help) return { help: EXTRACT_USAGE };
  if (positionals.length !== 2) throw new KitError(EXIT.usage, `give the archive and the output folder\n\n${EXTRACT_USAGE}`);
  const keepSpecialModes = values['keep-special-modes'] === true;
  if (keepSpecialModes && process.getuid?.() !== 0) {
    throw new KitError(EXIT.usage, '--keep-special-modes restores owners with the setuid/setgid/sticky bits, which needs root: run it as root or leave it out');
  }
  return { archive: positionals[0], out: positionals[1], keyFile: values['key-file'], only: values.only, keepSpecialModes };
}

function parsePitrCommand(argv) {
  const { values, positionals } = parseOptions(argv, PITR_OPTIONS, PITR_USAGE);
  if (values.help) return { help: PITR_USAGE };
  if (positionals.length > 0) throw new KitError(EXIT.usage, `unexpected argument ${positionals[0]}\n\n${PITR_USAGE}`);
  for (const name of ['base', 'wal', 'out']) if (!values[name]) throw new KitError(EXIT.usage, `--${name} is required\n\n${PITR_USAGE}`);
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new KitError(EXIT.usage, `--port must be a port number, not "${values.port}"`);
  if (port !== undefined && !values.start) throw new KitError(EXIT.usage, '--port goes with --start (without it, the printed pg_ctl command takes -o "-p <port>")');
  return {
    base: values.base,
    wal: values.wal,
    out: values.out,
    keyFile: values['key-file'],
    target: parseTarget(values),
    start: values.start === true,
    port,
    pgBin: values['pg-bin'],
    runAs: values['run-as'],
  };
}

function parseMysqlPitrCommand(argv) {
  const { values, positionals } = parseOptions(argv, MYSQL_PITR_OPTIONS, MYSQL_PITR_USAGE);
  if (values.help) return { help: MYSQL_PITR_USAGE };
  if (positionals.length > 0) throw new KitError(EXIT.usage, `unexpected argument ${positionals[0]}\n\n${MYSQL_PITR_USAGE}`);
  for (const name of ['base', 'binlogs', 'database']) if (!values[name]) throw new KitError(EXIT.usage, `--${name} is required\n\n${MYSQL_PITR_USAGE}`);
  const into = values.into ?? values.database;
  checkDatabaseName('--database', values.database);
  checkDatabaseName('--into', into);
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new KitError(EXIT.usage, `--port must be a port number, not "${values.port}"`);
  return {
    base: values.base,
    binlogs: values.binlogs,
    database: values.database,
    into,
    keyFile: values['key-file'],
    target: parseMysqlTarget(values),
    connection: { host: values.host, port, socket: values.socket, user: values.user, passwordFile: values['password-file'], defaultsFile: values['defaults-extra-file'] },
    binDir: values['bin-dir'],
    workDir: values['work-dir'],
    printOnly: values['print-only'] === true,
  };
}

async function mysqlPitrCommand(argv) {
  const options = parseMysqlPitrCommand(argv);
  if (options.help) return void process.stdout.write(`${options.help}\n`);
  return restoreMysqlToPoint(options);
}

async function pitrCommand(argv) {
  const options = parsePitrCommand(argv);
  if (options.help) return void process.stdout.write(`${options.help}\n`);
  return restoreToPoint(options);
}

async function decryptCommand(argv) {
  const options = parseDecryptCommand(argv);
  if (options.help) return void process.stdout.write(`${options.help}\n`);
  const key = readKey(options.keyFile);
  if (options.file !== '-' && !existsSync(options.file)) throw new KitError(EXIT.io, `backup file not found: ${options.file}`);
  if (options.file !== '-' && statSync(options.file).isDirectory()) throw new KitError(EXIT.io, `${options.file} is a directory`);
  if (options.out && existsSync(options.out) && !options.force) {
    throw new KitError(EXIT.io, `${options.out} exists; pass --force to overwrite it`);
  }
  if (!options.out && process.stdout.isTTY) {
    throw new KitError(EXIT.usage, 'refusing to write a backup to the terminal: use --out <path> or redirect the output');
  }
  const codec = options.decompress ?? codecFromSidecar(options.file) ?? 'none';
  if (codec !== 'none' && !(codec in DECOMPRESSORS)) throw new KitError(EXIT.usage, `unknown compression "${codec}" in the sidecar`);

  const stages = [options.file === '-' ? process.stdin : createReadStream(options.file), createDecrypter(key)];
  if (codec !== 'none') {
    const decompressor = DECOMPRESSORS[codec]();
    // Mark failures of this stage so they are reported as decompression errors, not as damage to the backup.
    decompressor.on('error', (error) => (error.isDecompression = true));
    stages.push(decompressor);
  }
  // Write to a side file and rename at the end, so a failed run never leaves a plausible-looking output behind.
  const partial = options.out ? `${options.out}.partial` : undefined;
  stages.push(partial ? createWriteStream(partial) : process.stdout);
  try {
    await pipeline(stages);
    if (partial) renameSync(partial, options.out);
  } catch (error) {
    if (partial) rmSync(partial, { force: true });
    if (error instanceof KitError) throw error;
    if (error.isDecompression) throw new KitError(EXIT.decompress, `${codec} decompression failed: ${error.message}`);
    throw new KitError(EXIT.io, `${error.code ?? 'I/O error'}: ${error.message}`);
  }
}

async function extractCommand(argv) {
  const options = parseExtractCommand(argv);
  if (options.help) return void process.stdout.write(`${options.help}\n`);
  if (!existsSync(options.archive)) throw new KitError(EXIT.io, `archive not found: ${options.archive}`);
  try {
    const { counts, warnings, archives, dumps } = await extractArchive(options);
    const count = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;
    const from = archives === 1 ? '1 archive' : `${archives} archives of its chain`;
    process.stderr.write(
      `holdfast-decrypt: restored ${count(counts.files, 'file')}, ${count(counts.directories, 'folder')}, ` +
        `${count(counts.symlinks, 'symlink')}, ${count(counts.hardlinks, 'hard link')} and ${count(counts.dumps, 'database dump')} ` +
        `from ${from} into ${options.out}\n`,
    );
    for (const { entry, safePath } of dumps) process.stderr.write(`holdfast-decrypt: database ${JSON.stringify(entry.database)}: ${safePath}\n`);
    for (const warning of warnings) process.stderr.write(`holdfast-decrypt: ${warning}\n`);
    if (warnings.length > 0) {
      process.stderr.write(`holdfast-decrypt: ${warnings.length} member${warnings.length === 1 ? ' was' : 's were'} not restored as archived (listed above)\n`);
      return EXIT.partial;
    }
  } catch (error) {
    if (error instanceof KitError || !error.code) throw error;
    throw new KitError(EXIT.io, `${error.code}: ${error.message}`);
  }
}

const [command, ...rest] = process.argv.slice(2);
const isExtract = command === 'extract';
const isPitr = command === 'pitr';
const isMysqlPitr = command === 'mysql-pitr';
const run = isExtract ? extractCommand(rest) : isPitr ? pitrCommand(rest) : isMysqlPitr ? mysqlPitrCommand(rest) : decryptCommand(process.argv.slice(2));
run.then(
  (exitCode) => {
    process.exitCode = exitCode ?? 0;
  },
  (error) => {
    const exitCode = error instanceof KitError ? error.exitCode : 1;
    const isOutputSuspect = !isExtract && !isPitr && !isMysqlPitr && (exitCode === EXIT.damaged || exitCode === EXIT.decompress);
    // extract and pitr build into <out>.partial and remove it on failure, so they leave nothing to distrust; a pitr
    // run whose server failed (--start) names the prepared data directory in its message.
    // mysql-pitr refuses before it creates the database and drops the database it created when a later step fails.
    const isNothingRestored = (isExtract && exitCode !== EXIT.usage) || (isPitr && exitCode !== EXIT.usage && !error.isAfterRestore) || (isMysqlPitr && exitCode !== EXIT.usage && !error.isDatabaseLeft);
    const tail = isNothingRestored ? ' (nothing was restored)' : isOutputSuspect ? ' (any output written is incomplete)' : '';
    process.stderr.write(`holdfast-decrypt: ${error.message}${tail}\n`);
    process.exit(exitCode);
  },
);
