// Regression (issue 40, item 6): POST /api/storage/:id/restore took hostile bodies (21 variants from an outside
// probe answered 200 and queued a run that then failed). Every malformed body must be a 400 naming the field, and
// queue nothing. Runs on libsql and PostgreSQL against a real storage and a real source configuration, so the answer
// can never be a 404 standing in for the validation.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const FILE = 'shop.dump';

/** A hostile body and the field its 400 must name. */
interface Hostile {
  label: string;
  body: unknown;
  field: string;
}

const hostile: Hostile[] = [
  { label: 'unknown field', body: { file: FILE, dropEverything: true }, field: 'body' },
  { label: 'unknown field, near miss of a real one', body: { file: FILE, targetSourceID: 'target' }, field: 'body' },
  { label: 'prototype key', body: JSON.parse(`{"file":"${FILE}","__proto__":{"isAdmin":true}}`), field: 'body' },
  { label: 'no file', body: { targetSourceId: 'target' }, field: 'body.file' },
  { label: 'empty file', body: { file: '' }, field: 'body.file' },
  { label: 'blank file', body: { file: '   ' }, field: 'body.file' },
  { label: 'numeric file', body: { file: 42 }, field: 'body.file' },
  { label: 'null file', body: { file: null }, field: 'body.file' },
  { label: 'array file', body: { file: [FILE] }, field: 'body.file' },
  { label: 'object file', body: { file: { path: FILE } }, field: 'body.file' },
  { label: 'huge file', body: { file: 'a'.repeat(100_000) }, field: 'body.file' },
  { label: 'file climbing out of the storage', body: { file: '../../etc/passwd' }, field: 'body.file' },
  { label: 'file with a dot-dot segment inside', body: { file: 'backups/../../secret.dump' }, field: 'body.file' },
  { label: 'absolute file', body: { file: '/etc/shadow' }, field: 'body.file' },
  { label: 'file with a backslash traversal', body: { file: '..\\..\\windows\\system.ini' }, field: 'body.file' },
  { label: 'file with a NUL', body: { file: `${FILE}\u0000.txt` }, field: 'body.file' },
  { label: 'file with a newline', body: { file: `${FILE}\nforged log line` }, field: 'body.file' },
  { label: 'file naming a sidecar', body: { file: `${FILE}.meta.json` }, field: 'body.file' },
  { label: 'empty targetSourceId', body: { file: FILE, targetSourceId: '' }, field: 'body.targetSourceId' },
  { label: 'numeric targetSourceId', body: { file: FILE, targetSourceId: 7 }, field: 'body.targetSourceId' },
  { label: 'null targetSourceId', body: { file: FILE, targetSourceId: null }, field: 'body.targetSourceId' },
  { label: 'huge targetSourceId', body: { file: FILE, targetSourceId: 'x'.repeat(5_000) }, field: 'body.targetSourceId' },
  { label: 'empty database', body: { file: FILE, database: '' }, field: 'body.database' },
  { label: 'numeric database', body: { file: FILE, database: 5 }, field: 'body.database' },
  { label: 'null database', body: { file: FILE, database: null }, field: 'body.database' },
  { label: 'array database', body: { file: FILE, database: ['shop'] }, field: 'body.database' },
  { label: 'huge database', body: { file: FILE, database: 'd'.repeat(10_000) }, field: 'body.database' },
  { label: 'database with a path', body: { file: FILE, database: '../../var/lib/other' }, field: 'body.database' },
  { label: 'database with a control character', body: { file: FILE, database: 'shop\r\nDROP' }, field: 'body.database' },
  { label: 'array databaseMapping', body: { file: FILE, databaseMapping: [['shop', 'shop_copy']] }, field: 'body.databaseMapping' },
  { label: 'string databaseMapping', body: { file: FILE, databaseMapping: 'shop=shop_copy' }, field: 'body.databaseMapping' },
  { label: 'null databaseMapping', body: { file: FILE, databaseMapping: null }, field: 'body.databaseMapping' },
  { label: 'empty target name in databaseMapping', body: { file: FILE, databaseMapping: { shop: '' } }, field: 'body.databaseMapping' },
  { label: 'empty source name in databaseMapping', body: { file: FILE, databaseMapping: { '': 'shop' } }, field: 'body.databaseMapping' },
  { label: 'numeric target in databaseMapping', body: { file: FILE, databaseMapping: { shop: 1 } }, field: 'body.databaseMapping' },
  { label: 'path as a target in databaseMapping', body: { file: FILE, databaseMapping: { shop: '../other' } }, field: 'body.databaseMapping' },
  { label: 'relative targetPath', body: { file: FILE, targetPath: 'restore/here' }, field: 'body.targetPath' },
  { label: 'targetPath climbing with dot-dot', body: { file: FILE, targetPath: '/srv/restore/../../etc' }, field: 'body.targetPath' },
  { label: 'empty targetPath', body: { file: FILE, targetPath: '' }, field: 'body.targetPath' },
  { label: 'null targetPath', body: { file: FILE, targetPath: null }, field: 'body.targetPath' },
  { label: 'targetPath with a NUL', body: { file: FILE, targetPath: '/srv/\u0000' }, field: 'body.targetPath' },
  { label: 'string restoreToOriginalPaths', body: { file: FILE, restoreToOriginalPaths: 'true' }, field: 'body.restoreToOriginalPaths' },
  { label: 'numeric restoreToOriginalPaths', body: { file: FILE, restoreToOriginalPaths: 1 }, field: 'body.restoreToOriginalPaths' },
  { label: 'null restoreToOriginalPaths', body: { file: FILE, restoreToOriginalPaths: null }, field: 'body.restoreToOriginalPaths' },
  { label: 'targetPath and restoreToOriginalPaths together', body: { file: FILE, targetPath: '/srv/restore', restoreToOriginalPaths: true }, field: 'body.targetPath' },
  { label: 'empty paths', body: { file: FILE, paths: [] }, field: 'body.paths' },
  { label: 'string paths', body: { file: FILE, paths: 'docs/a.txt' }, field: 'body.paths' },
  { label: 'null paths', body: { file: FILE, paths: null }, field: 'body.paths' },
  { label: 'empty path in paths', body: { file: FILE, paths: [''] }, field: 'body.paths' },
  { label: 'numeric path in paths', body: { file: FILE, paths: [3] }, field: 'body.paths' },
  { label: 'path climbing out in paths', body: { file: FILE, paths: ['../../etc/passwd'] }, field: 'body.paths' },
  { label: 'absolute path in paths', body: { file: FILE, paths: ['/etc/passwd'] }, field: 'body.paths' },
  { label: 'too many paths', body: { file: FILE, paths: Array.from({ length: 1_001 }, (_, i) => `f${i}`) }, field: 'body.paths' },
  { label: 'body is an array', body: [{ file: FILE }], field: 'body' },
  { label: 'body is a string', body: FILE, field: 'body' },
  { label: 'body is null', body: null, field: 'body' },
  { label: 'body is a number', body: 1, field: 'body' },
];

describe.each(['sqlite', 'postgresql'] as const)('POST /api/storage/:id/restore refuses hostile bodies (%s)', (dialect) => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    target = await createTarget(dialect);
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-restore-input-'));
    await writeFile(join(dir, FILE), 'not a real dump');
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addConfig({ configId: 'target', name: 'Target', kind: 'source', adapterId: 'generated', config: { restoreTo: join(dir, 'restored.txt') } });
    key = await server.apiKey('restorer', ['storage:restore', 'history:read']);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const executionCount = async () => Number((await server.handle.container.resolve(ORM_DATABASE).em().getKnex()('executions').count({ n: '*' }))[0]!.n);

  it(`answers 400 naming the field for each of ${hostile.length} hostile bodies and queues no run`, async () => {
    const before = await executionCount();
    const wrong: string[] = [];
    for (const { label, body, field } of hostile) {
      const answer = await call(server.url, 'POST', '/api/storage/disk/restore', { key, json: body });
      const error = String(answer.body?.error ?? '');
      if (answer.status !== 400 || !error.includes(field)) wrong.push(`${label}: ${answer.status} ${error.slice(0, 160)}`);
    }
    expect(wrong).toEqual([]);
    expect(await executionCount()).toBe(before);
  });

  it('still queues a well-formed restore (the refusals are not a closed door)', async () => {
    const before = await executionCount();
    const answer = await call(server.url, 'POST', '/api/storage/disk/restore', { key, json: { file: FILE, targetSourceId: 'target', database: 'shop' } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ success: true, executionId: expect.any(String), message: 'Restore queued' });
    expect(await executionCount()).toBe(before + 1);
  });
});
