// The checks a MySQL/MariaDB point-in-time test restore runs on a rebuilt database before dropping it, against the
// real MariaDB PITR test server through the MySQL source's own scratch operations: a table the base recorded but the
// database lacks fails "tables present" (naming it), row counts are reported and never compared, a database that is
// not there fails, and a base without figures only needs a table. The run itself is tested end to end in
// mysql-pitr-test-restore.test.ts (where every check passes).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import sourceMysql from '@holdfast/source-mysql';
import { instantiateAdapter, type ScratchDatabaseServer, type SourceAdapter } from '@holdfast/kernel';
import mysql from 'mysql2/promise';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restoredDatabaseChecks } from '../../src/pitr/test-restore/mysql-restored-checks.js';

const mariadb = JSON.parse(await readFile('/tmp/holdfast-test-services/mariadb-pitr/mariadb-pitr.json', 'utf8')) as { host: string; port: number; users: Record<'admin', { user: string; password: string }> };
const DB = `hf_pitr_checks_${randomBytes(4).toString('hex')}`;

describe('checks of a database rebuilt by a MySQL point-in-time test restore', () => {
  let admin: mysql.Connection;
  let source: SourceAdapter;
  let scratch: ScratchDatabaseServer;

  beforeAll(async () => {
    const { user, password } = mariadb.users.admin;
    admin = await mysql.createConnection({ host: mariadb.host, port: mariadb.port, user, password });
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.items (id INT PRIMARY KEY)`);
    await admin.query(`INSERT INTO \`${DB}\`.items VALUES (1), (2), (3)`);
    source = instantiateAdapter(container, sourceMysql, { host: mariadb.host, port: mariadb.port, user, password, tls: 'disable' }) as SourceAdapter;
    scratch = source.scratch!() as ScratchDatabaseServer;
  });

  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\``).catch(() => undefined);
    await admin?.end();
    await source?.dispose?.();
  });

  it('fails "tables present" naming a table of the base the database lacks, and reports the counts it has', async () => {
    const found = await restoredDatabaseChecks(scratch, 'shop', DB, { databases: { shop: { items: 1, orders: 7 } } });
    expect(found.tables).toEqual({ items: 3 });
    expect(found.checks).toEqual([
      { name: 'shop: restored database', ok: true, detail: `"${DB}" on ${mariadb.host}:${mariadb.port}` },
      { name: 'shop: tables present', ok: false, detail: 'missing: orders (tables of the base backup; a table dropped between the base backup and the target is missing too)' },
      { name: 'shop: row counts', ok: true, detail: '3 rows at the target (items 3); the base backup had items 1, orders 7' },
    ]);
  });

  it('passes with every table of the base (counts differing from the base), and without figures when a table is there', async () => {
    const withFigures = await restoredDatabaseChecks(scratch, 'shop', DB, { databases: { shop: { items: 10 } } });
    expect(withFigures.checks.every((check) => check.ok)).toBe(true);
    const withoutFigures = await restoredDatabaseChecks(scratch, 'shop', DB, undefined);
    expect(withoutFigures.checks.map((check) => [check.name, check.ok])).toEqual([
      ['shop: restored database', true],
      ['shop: tables present', true],
      ['shop: row counts', true],
    ]);
  });

  it('fails when the rebuilt database is not on the server', async () => {
    const found = await restoredDatabaseChecks(scratch, 'shop', `${DB}_gone`, { databases: { shop: { items: 1 } } });
    expect(found.checks).toEqual([{ name: 'shop: restored database', ok: false, detail: `"${DB}_gone" is not on the server after the restore` }]);
  });
});
