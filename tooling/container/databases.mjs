// Throwaway databases on the machine's test servers (PostgreSQL 127.0.0.1:5432 trust auth as root, MariaDB
// 127.0.0.1:3306 root without password) for the container tests, and the dumps that compare a restore with its
// original: the host's own pg_dump and mariadb-dump, whose text output must be equal byte for byte.
import { run } from './podman.mjs';

const PG = ['-h', '127.0.0.1', '-U', 'root', '-v', 'ON_ERROR_STOP=1', '-qAt'];
const MARIADB = ['-h', '127.0.0.1', '-P', '3306', '-u', 'root', '--protocol=tcp'];

export const psql = (database, sql) => run('psql', [...PG, '-d', database, '-c', sql], { env: process.env }).stdout;
export const mariadb = (sql, database) => run('mariadb', [...MARIADB, ...(database ? [database] : []), '-N', '-e', sql], { env: process.env }).stdout;

/** A PostgreSQL database with several types, a view and a sequence; `rows` rows. */
export function createPostgresFixture(name, rows = 3000) {
  psql('postgres', `CREATE DATABASE ${name}`);
  psql(name, `
    CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, price numeric(10,2), created timestamptz,
                        payload jsonb, blob bytea);
    INSERT INTO items (name, price, created, payload, blob)
      SELECT md5(i::text), i * 1.25, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 minute',
             jsonb_build_object('i', i, 'tags', jsonb_build_array('a', i % 7)), decode(md5(i::text), 'hex')
      FROM generate_series(1, ${rows}) AS i;
    CREATE VIEW expensive AS SELECT id, name FROM items WHERE price > 100;
    CREATE INDEX items_created ON items (created);`);
}

/** A MariaDB database with several types and a trigger-free table; `rows` rows. */
export function createMariadbFixture(name, rows = 3000) {
  mariadb(`CREATE DATABASE ${name}`);
  mariadb(`
    SET SESSION max_recursive_iterations = ${rows + 1};
    CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(64) NOT NULL, price DECIMAL(10,2),
                        created DATETIME(6), payload JSON, blob_col VARBINARY(32)) ENGINE=InnoDB;
    INSERT INTO items (name, price, created, payload, blob_col)
      WITH RECURSIVE seq (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${rows})
      SELECT MD5(i), i * 1.25, TIMESTAMP('2026-01-01') + INTERVAL i MINUTE, JSON_OBJECT('i', i), UNHEX(MD5(i)) FROM seq;
    CREATE VIEW expensive AS SELECT id, name FROM items WHERE price > 100;`, name);
}

/**
 * pg_dump's plain output of one database, without owners and grants (the restore runs as another role) and without
 * the `\restrict`/`\unrestrict` lines pg_dump 15.14+ writes with a random key per dump (two dumps never match there).
 */
export function postgresDump(name) {
  const dump = run('pg_dump', ['-h', '127.0.0.1', '-U', 'root', '--no-owner', '--no-privileges', name], { env: process.env }).stdout;
  return dump.split('\n').filter((line) => !/^\\(un)?restrict /.test(line)).join('\n');
}

/** mariadb-dump's output of one database without the comments that name the database or the time. */
export function mariadbDump(name) {
  return run('mariadb-dump', [...MARIADB, '--skip-comments', '--skip-dump-date', '--routines', '--events', name], { env: process.env }).stdout;
}

export function dropPostgres(...names) {
  for (const name of names) run('psql', [...PG, '-d', 'postgres', '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { env: process.env, allowFailure: true });
}

export function dropMariadb(...names) {
  for (const name of names) run('mariadb', [...MARIADB, '-e', `DROP DATABASE IF EXISTS ${name}`], { env: process.env, allowFailure: true });
}
