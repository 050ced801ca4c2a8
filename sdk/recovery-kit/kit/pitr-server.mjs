// The PostgreSQL side of the recovery kit's point-in-time restore: finding the server's programs of the base's major
// version, reading commit times with pg_waldump, handing the data directory to the user that runs PostgreSQL (it
// refuses to run as root), and starting the restored server and following its log until it has promoted.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { lchown, open } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { EXIT, KitError } from './hfenc.mjs';

const run = promisify(execFile);
export const RESTORE_LOG = 'holdfast-restore.log';

/** The folder holding pg_ctl (and pg_waldump) of PostgreSQL `major`: --pg-bin, Debian's folder, then PATH. */
export function findServerPrograms(major, pgBin) {
  const tried = [];
  const candidates = [...(pgBin ? [pgBin] : []), `/usr/lib/postgresql/${major}/bin`, `/usr/pgsql-${major}/bin`, ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  for (const dir of candidates) {
    const pgCtl = join(dir, 'pg_ctl');
    if (!existsSync(pgCtl)) continue;
    const version = spawnSync(pgCtl, ['--version'], { encoding: 'utf8' }).stdout ?? '';
    const found = /\(PostgreSQL\) (\d+)/.exec(version)?.[1];
    tried.push(`${pgCtl} (${found ? `PostgreSQL ${found}` : 'no version'})`);
    if (found === String(major)) {
      const pgWaldump = join(dir, 'pg_waldump');
      return { dir, pgCtl, ...(existsSync(pgWaldump) ? { pgWaldump } : {}) };
    }
    if (dir === pgBin) break;
  }
  return { tried };
}

/**
 * The newest commit or abort time in the restored WAL (newest segment first, stopping at the first that has one),
 * or undefined when pg_waldump shows none. PostgreSQL 14+ refuses a target time after it ("recovery ended before
 * configured recovery target was reached"): replay stops only at a commit later than the target.
 */
export async function newestCommitTime(pgWaldump, segmentFiles) {
  for (const file of [...segmentFiles].reverse()) {
    // pg_waldump exits non-zero at the end of the valid records of a partial segment; what it printed still counts.
    const output = await run(pgWaldump, ['--rmgr=Transaction', file], { maxBuffer: 256 * 1024 * 1024, env: { ...process.env, TZ: 'UTC', LC_ALL: 'C' } }).then(
      (result) => result.stdout,
      (error) => error.stdout ?? '',
    );
    let newest;
    for (const match of output.matchAll(/desc: (?:COMMIT|ABORT) (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (\w+)/g)) {
      if (match[2] !== 'UTC' && match[2] !== 'GMT') return undefined; // not printed in UTC: no guess
      const time = new Date(`${match[1].replace(' ', 'T')}Z`);
      if (!newest || time > newest) newest = time;
    }
    if (newest) return newest;
  }
  return undefined;
}

/** The user whose files the data directory becomes: only root hands it over (to `runAs`, default postgres). */
export function serverOwner(runAs) {
  const isRoot = process.getuid?.() === 0;
  if (!isRoot) {
    if (runAs) throw new KitError(EXIT.usage, '--run-as needs root (it hands the data directory to that user); without it the files are yours and PostgreSQL runs as you');
    return undefined;
  }
  const name = runAs ?? 'postgres';
  const id = (flag) => Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout?.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) {
    throw new KitError(EXIT.usage, `PostgreSQL refuses to run as root, and there is no user "${name}" to hand the data directory to: pass --run-as <user> (the user that runs PostgreSQL) or run the kit as that user`);
  }
  return { name, uid, gid };
}

/** Gives every file and folder below `dir` to `owner`. */
export async function handOver(dir, owner) {
  await lchown(dir, owner.uid, owner.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await handOver(path, owner);
    else await lchown(path, owner.uid, owner.gid);
  }
}

function shellQuoted(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command line, as a user would type it (run as the owner when root hands the directory over). */
export function commandLine(owner, argv) {
  return [...(owner ? ['runuser', '-u', owner.name, '--'] : []), ...argv].map(shellQuoted).join(' ');
}

/** pg_ctl's arguments to start the restored directory (a port when given; the log in the data directory). */
export function startArguments(pgCtl, dataDir, port, extraOptions = []) {
  const options = [...(port ? [`-p ${port}`] : []), ...extraOptions];
  return [pgCtl, '-D', dataDir, '-l', join(dataDir, RESTORE_LOG), ...(options.length > 0 ? ['-o', options.join(' ')] : []), 'start'];
}

/**
 * Starts the restored server and follows its log until it has promoted ("database system is ready to accept
 * connections", said after recovery; read-only ones are said earlier) or failed (a FATAL or PANIC of the server,
 * such as "recovery ended before configured recovery target was reached", or its exit). Returns what replay did.
 */
export async function startAndAwaitPromotion({ pgCtl, dataDir, port, owner, onProgress }) {
  // Command-line settings win over the copied files: English messages in this log, UTC times, process types named.
  const options = ['-c logging_collector=off', '-c log_destination=stderr', '-c lc_messages=C', '-c log_timezone=UTC', "-c 'log_line_prefix=%m [%p] %b: '"];
  const argv = startArguments(pgCtl, dataDir, port, options);
  argv.splice(argv.length - 1, 0, '-W');
  const [command, ...args] = owner ? ['runuser', '-u', owner.name, '--', ...argv] : argv;
  try {
    await run(command, args, { timeout: 60_000, env: { ...process.env, LC_ALL: 'C' } });
  } catch (error) {
    throw new KitError(EXIT.server, `pg_ctl could not start PostgreSQL: ${error.stderr?.trim() || error.message}`);
  }
  const logFile = join(dataDir, RESTORE_LOG);
  const outcome = { segments: 0 };
  let offset = 0;
  let pending = '';
  for (let quiet = 0, seen = false; ; ) {
    const handle = await open(logFile, 'r').catch(() => null);
    if (handle) {
      try {
        const { size } = await handle.stat();
        if (size > offset) {
          const { buffer, bytesRead } = await handle.read(Buffer.alloc(size - offset), 0, size - offset, offset);
          offset += bytesRead;
          pending += buffer.subarray(0, bytesRead).toString('utf8');
        }
      } finally {
        await handle.close();
      }
    }
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const failure = /\b(?:FATAL|PANIC):\s+(.*)$/.exec(line);
      if (failure && !line.includes('client backend:')) {
        const isTarget = /recovery target|recovery stop point/.test(failure[1]);
        throw new KitError(isTarget ? EXIT.target : EXIT.server, `PostgreSQL stopped: ${failure[1].trim()} (log: ${logFile})`);
      }
      const restored = /restored log file "([0-9A-F]{24})" from archive/.exec(line);
      if (restored) {
        outcome.segments += 1;
        onProgress?.(`replayed WAL segment ${restored[1]} (${outcome.segments})`);
      }
      const stopping = /(recovery stopping (?:before|after) .*)$/.exec(line);
      if (stopping) outcome.stoppedAt = stopping[1];
      const last = /last completed transaction was at log time (.+)$/.exec(line);
      if (last) outcome.lastTransactionAt = last[1].trim();
      if (/database system is ready to accept connections/.test(line)) return outcome;
    }
    // The server keeps postmaster.pid while it runs (pg_ctl -W may return before it is written): once seen, gone
    // for three polls without a FATAL means it exited; never seen within 10 s, too.
    const isRunning = existsSync(join(dataDir, 'postmaster.pid'));
    if (isRunning) seen = true;
    quiet = isRunning ? 0 : quiet + 1;
    if (quiet >= (seen ? 3 : 50)) throw new KitError(EXIT.server, `PostgreSQL exited during recovery; see ${logFile}${pending ? `: ${pending.trim()}` : ''}`);
    await sleep(200);
  }
}
