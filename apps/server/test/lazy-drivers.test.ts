// The heavy client libraries of optional adapters load with their first use, not when the server discovers its
// adapters: a server whose jobs never use S3, WebDAV, Azure, MongoDB or SQL Server does not carry them in memory
// (docs/benchmarks.md, "The full server idles higher than the benchmark child").
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const hooks = new URL('./support/record-resolved.mjs', import.meta.url).href;
const scratch = mkdtempSync(join(tmpdir(), 'holdfast-lazy-drivers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const LAZY_LIBRARIES = ['@aws-sdk/client-s3', 'webdav', '@azure/storage-blob', 'mongodb', 'mssql', 'mysql2', 'ioredis', 'nodemailer'];

/** Runs `script` (an ES module body) in a fresh Node process and returns the package names it resolved. */
function packagesResolvedBy(script: string): Set<string> {
  const log = join(scratch, `resolved-${Math.random().toString(36).slice(2)}.log`);
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks)});`;
  execFileSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script], {
    cwd: serverDir,
    env: { ...process.env, HOLDFAST_RESOLVED_LOG: log },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  const names = new Set<string>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    // Libraries by their folder in node_modules; this repository's workspace packages by their real path.
    const library = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    const workspace = /\/(?:adapters|plugins|sdk)\/([^/]+)\/dist\//.exec(url)?.[1];
    if (library) names.add(library);
    else if (workspace) names.add(`@holdfast/${workspace}`);
  }
  return names;
}

describe('optional client libraries load on first use', () => {
  it('discovering every adapter of the server loads none of them', () => {
    const loaded = packagesResolvedBy(
      `import 'reflect-metadata'; import { discoverAdapters } from './dist/discovery/index.js';
       const registry = await discoverAdapters(); if (registry.list().length < 20) throw new Error('too few adapters: ' + registry.list().length);`,
    );
    // The discovery did load adapter packages (the hook works) ...
    expect(loaded.has('@holdfast/storage-s3')).toBe(true);
    expect(loaded.has('@holdfast/storage-webdav')).toBe(true);
    // ... and none of the libraries behind them.
    expect(LAZY_LIBRARIES.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('the S3 and WebDAV adapters load their library with the first request', () => {
    const loaded = packagesResolvedBy(
      `import 'reflect-metadata';
       import { S3Storage, s3StorageConfig } from '@holdfast/storage-s3';
       import { WebdavStorage, webdavStorageConfig } from '@holdfast/storage-webdav';
       const logger = { debug() {}, info() {}, warn() {}, error() {} };
       logger.child = () => logger;
       const s3 = new S3Storage(s3StorageConfig.parse({ preset: 'custom', endpoint: 'http://127.0.0.1:9', region: 'us-east-1',
         bucket: 'lazy', accessKeyId: 'k', secretAccessKey: 's', connectTimeoutSeconds: 1, requestTimeoutSeconds: 5 }), { logger });
       const dav = new WebdavStorage(webdavStorageConfig.parse({ url: 'http://127.0.0.1:9/dav', username: 'u', password: 'p', timeoutSeconds: 1 }), { logger });
       // Port 9 (discard) is closed here: both checks fail, after their library was loaded to send the request.
       const checks = [await s3.check(), await dav.check()];
       if (checks.some((check) => check.ok)) throw new Error('a check of a closed port passed');`,
    );
    expect(loaded.has('@aws-sdk/client-s3')).toBe(true);
    expect(loaded.has('webdav')).toBe(true);
  });
});
