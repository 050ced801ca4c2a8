// Starts pitr-child.mjs (a real Holdfast server process streaming one point-in-time job) for the fault and takeover
// tests, which kill it with SIGKILL as a crash would.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./pitr-child.mjs', import.meta.url));

/** What the child streams and where it keeps its state. */
export interface PitrChildOptions {
  dataDir: string;
  /** A PostgreSQL state database shared with another process; absent: libsql in `dataDir`. */
  databaseUrl?: string;
  /** `sourceAdapter` 'mysql': the MySQL source in point-in-time mode (default: PostgreSQL in physical mode). */
  job: { id: string; name: string; source: Record<string, unknown>; destination: string; databases?: string[]; sourceAdapter?: 'postgres' | 'mysql' };
}

/** Resolves once the child printed its URL and API key; rejects with its stderr when it exits first. */
export async function startPitrChild(options: PitrChildOptions): Promise<{ child: ChildProcess; url: string; key: string }> {
  const started = spawn(process.execPath, [CHILD], {
    env: { ...process.env, HOLDFAST_DATA_DIR: options.dataDir, PITR_DATABASE_URL: options.databaseUrl ?? '', PITR_JOB: JSON.stringify(options.job) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  started.stderr!.on('data', (chunk) => (stderr += chunk));
  const lines = createInterface({ input: started.stdout! });
  const [url, key] = await new Promise<[string, string]>((resolve, reject) => {
    lines.on('line', (line) => {
      const [word, ...rest] = line.split(' ');
      if (word === 'ready') resolve(rest as [string, string]);
    });
    started.once('exit', (code) => reject(new Error(`the child exited ${code}: ${stderr}`)));
  });
  return { child: started, url, key };
}
