// Azurite (Microsoft's Azure Storage emulator, npm `azurite`, pinned as a devDependency of
// @holdfast/storage-azure-blob) serving the Blob API on 127.0.0.1:10000, for the Azure Blob storage tests.
// Idempotent: a running instance (its state file present and the port answering HTTP) is reused.
// Usable three ways: `ensureAzurite()` from ensure.mjs, as a vitest globalSetup (default export), or `node azurite.mjs`.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AZURITE_HOST = '127.0.0.1';
export const AZURITE_PORT = 10000;
export const AZURITE_STATE_DIR = '/tmp/holdfast-test-services/azurite';
/** JSON file tests read: host, port, accountName, accountKey, blobEndpoint, connectionString, pid. */
export const AZURITE_STATE_FILE = join(AZURITE_STATE_DIR, 'azurite.json');

// Azurite's built-in development account; its key is public (documented by Microsoft), not a secret.
const ACCOUNT = 'devstoreaccount1';
const ACCOUNT_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BINARY = join(ROOT, 'node_modules', '.bin', 'azurite-blob');

/** Azurite answers any HTTP request once its blob service listens; a bare TCP connect could be someone else. */
function answersBlobApi(timeoutMs = 1000) {
  return new Promise((resolve) => {
    const request = http.get({ host: AZURITE_HOST, port: AZURITE_PORT, path: `/${ACCOUNT}?comp=list`, timeout: timeoutMs }, (response) => {
      response.resume();
      // Azurite names itself in the Server header ("Azurite-Blob/3.x").
      resolve(String(response.headers.server ?? '').startsWith('Azurite-Blob'));
    });
    request.once('timeout', () => {
      request.destroy();
      resolve(false);
    });
    request.once('error', () => resolve(false));
  });
}

function writeState(pid) {
  const blobEndpoint = `http://${AZURITE_HOST}:${AZURITE_PORT}/${ACCOUNT}`;
  const state = {
    host: AZURITE_HOST,
    port: AZURITE_PORT,
    accountName: ACCOUNT,
    accountKey: ACCOUNT_KEY,
    blobEndpoint,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${ACCOUNT_KEY};BlobEndpoint=${blobEndpoint};`,
    pid,
  };
  writeFileSync(AZURITE_STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
}

/** Starts Azurite when it is not answering yet; resolves `'already running'` or `'started'`. */
export async function ensureAzurite() {
  if ((await answersBlobApi()) && existsSync(AZURITE_STATE_FILE)) return 'already running';
  if (await answersBlobApi()) {
    // An Azurite from an earlier run whose state file was removed: same well-known account, so reuse it.
    mkdirSync(AZURITE_STATE_DIR, { recursive: true });
    writeState(null);
    return 'already running';
  }
  if (!existsSync(BINARY)) {
    throw new Error(`azurite is not installed at ${BINARY}: run npm ci (it is a devDependency of @holdfast/storage-azure-blob)`);
  }
  const data = join(AZURITE_STATE_DIR, 'data');
  // A fresh data folder per start: blobs of an earlier run would only waste disk.
  rmSync(data, { recursive: true, force: true });
  mkdirSync(data, { recursive: true });
  rmSync(AZURITE_STATE_FILE, { force: true });
  const log = openSync(join(AZURITE_STATE_DIR, 'azurite.log'), 'a');
  // On disk rather than --inMemoryPersistence: the 64 MiB conformance round trips would otherwise sit in RAM on a
  // shared machine. --skipApiVersionCheck lets a newer SDK talk to this emulator; --loose ignores headers it lacks.
  const child = spawn(
    BINARY,
    [
      '--blobHost', AZURITE_HOST,
      '--blobPort', String(AZURITE_PORT),
      '--location', data,
      '--skipApiVersionCheck',
      '--loose',
      '--silent',
      '--disableTelemetry',
    ],
    { detached: true, stdio: ['ignore', log, log] },
  );
  // Detached and unreferenced, so it outlives the process that started it (as `npm test` needs).
  child.unref();
  for (let i = 0; i < 150 && !(await answersBlobApi()); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!(await answersBlobApi())) {
    throw new Error(`Azurite did not answer on ${AZURITE_HOST}:${AZURITE_PORT} within 15 s (see ${AZURITE_STATE_DIR}/azurite.log)`);
  }
  writeState(child.pid);
  writeFileSync(join(AZURITE_STATE_DIR, 'azurite.pid'), `${child.pid}\n`);
  return 'started';
}

/** vitest globalSetup entry: the Azure Blob tests start the emulator themselves. */
export default async function setup() {
  await ensureAzurite();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureAzurite().then(
    (state) => process.stdout.write(`azurite ${state} on ${AZURITE_HOST}:${AZURITE_PORT}\n`),
    (error) => {
      process.stderr.write(`azurite: ${error.message}\n`);
      process.exit(1);
    },
  );
}
