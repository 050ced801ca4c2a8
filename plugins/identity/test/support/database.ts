// Test databases: a libsql temp file or a throwaway PostgreSQL database, each with the identity migrations applied
// through the knex schema builder exactly as the persistence plugin runs them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { MikroORM as LibsqlOrm } from '@mikro-orm/libsql';
import { MikroORM as PostgresOrm } from '@mikro-orm/postgresql';
import type { MikroORM } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { DatabasePort } from '@holdfast/kernel';
import { identityEntities } from '../../src/entities/index.js';
import { identityMigrations } from '../../src/migrations/index.js';

export type Dialect = 'sqlite' | 'postgresql';

/** A migrated database for one test, with its port and a disposer that removes it. */
export interface TestDatabase {
  dialect: Dialect;
  orm: MikroORM;
  port: DatabasePort;
  /** Every row of every table, for scans such as "the raw key is nowhere". */
  dumpAllRows(): Promise<string>;
  close(): Promise<void>;
}

const PG_ADMIN_URL = 'postgresql://root@127.0.0.1:5432/postgres';

async function migrate(orm: MikroORM, dialect: Dialect): Promise<void> {
  const knex = (orm.em as SqlEntityManager).getKnex();
  for (const migration of identityMigrations) await migration.up(knex, dialect);
}

function portOf(orm: MikroORM, dialect: Dialect): DatabasePort {
  return {
    dialect,
    em: () => orm.em.fork(),
    isReachable: () => orm.isConnected(),
  };
}

async function dumpRows(orm: MikroORM, dialect: Dialect): Promise<string> {
  const knex = (orm.em as SqlEntityManager).getKnex();
  const tables =
    dialect === 'sqlite'
      ? ((await knex.raw("select name from sqlite_master where type = 'table'")) as { name: string }[]).map((r) => r.name)
      : ((await knex.raw("select tablename as name from pg_tables where schemaname = 'public'")) as { rows: { name: string }[] }).rows.map((r) => r.name);
  const parts: string[] = [];
  for (const table of tables) parts.push(JSON.stringify(await knex(table).select('*')));
  return parts.join('\n');
}

/** Opens a fresh libsql file database in a temp dir. */
export async function openLibsql(): Promise<TestDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-identity-'));
  const orm = await LibsqlOrm.init({ dbName: join(dir, 'test.db'), entities: [...identityEntities], debug: false, allowGlobalContext: false });
  await migrate(orm, 'sqlite');
  return {
    dialect: 'sqlite',
    orm,
    port: portOf(orm, 'sqlite'),
    dumpAllRows: () => dumpRows(orm, 'sqlite'),
    close: async () => {
      await orm.close(true);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a throwaway PostgreSQL database on the local server. Fails loudly when PostgreSQL is not running. */
export async function openPostgres(): Promise<TestDatabase> {
  const dbName = `holdfast_identity_${randomBytes(6).toString('hex')}`;
  const admin = await PostgresOrm.init({ clientUrl: PG_ADMIN_URL, entities: [], discovery: { warnWhenNoEntities: false } }).catch(
    (error: unknown) => {
      throw new Error(`PostgreSQL at 127.0.0.1:5432 is needed for this test and is not reachable: ${String(error)}`);
    },
  );
  await admin.em.getConnection().execute(`create database "${dbName}"`);
  const orm = await PostgresOrm.init({
    clientUrl: `postgresql://root@127.0.0.1:5432/${dbName}`,
    entities: [...identityEntities],
    debug: false,
  });
  await migrate(orm, 'postgresql');
  return {
    dialect: 'postgresql',
    orm,
    port: portOf(orm, 'postgresql'),
    dumpAllRows: () => dumpRows(orm, 'postgresql'),
    close: async () => {
      await orm.close(true);
      await admin.em.getConnection().execute(`drop database if exists "${dbName}" with (force)`);
      await admin.close(true);
    },
  };
}

/** Opens a database of `dialect`. */
export function openDatabase(dialect: Dialect): Promise<TestDatabase> {
  return dialect === 'sqlite' ? openLibsql() : openPostgres();
}
