import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { container } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { parseDumpHeader } from '../src/internal/dump-header.js';
import { checksums, createDatabase, dropDatabase, seed, server, sql } from './helpers.js';
import { collect, databaseExists, dropRolesRecreatedBy, ownerOf, reframe, roleAuth, roleNames, withServerVersion } from './globals-helpers.js';

// Globals (pg_dumpall --globals-only), the restore options and the newer-major guard, against the local
// PostgreSQL 15 (trust auth). Roles are cluster-wide: every role made here has a random name and is dropped after.
const created: string[] = [];
const roles: string[] = [];

async function database(label: string): Promise<string> {
  const name = await createDatabase(label);
  created.push(name);
  return name;
}

async function role(label: string, password: string): Promise<string> {
  const name = `hf_pgglob_${label}_${randomBytes(3).toString('hex')}`;
  roles.push(name);
  await sql('postgres', `CREATE ROLE "${name}" LOGIN PASSWORD '${password}' VALID UNTIL '2099-01-01'`);
  return name;
}

function source(overrides: Record<string, unknown> = {}): SourceAdapter {
  return instantiateAdapter(container, definition, { ...server, ...overrides });
}

const signal = () => new AbortController().signal;

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
  for (const name of roles) await sql('postgres', `DROP ROLE IF EXISTS "${name}"`);
});

describe('source-postgres globals and restore options against the local PostgreSQL', () => {
  let seeded: string;
  let expected: Record<string, string>;

  beforeAll(async () => {
    seeded = await database('plain');
    expected = await seed(seeded, 2000);
  });

  it('backs up a role with the globals and brings it back, with its owner and grants, after it was dropped', async () => {
    const owner = await role('owner', `Pw-${randomBytes(6).toString('hex')}`);
    const reader = await role('reader', 'reader-pw');
    const origin = await database('glob');
    const originExpected = await seed(origin, 500);
    await sql(origin, `ALTER TABLE items OWNER TO "${owner}"`);
    await sql(origin, `GRANT SELECT ON notes TO "${reader}"`);
    const ownerAuth = await roleAuth(owner);
    expect(ownerAuth.rolpassword).toMatch(/^SCRAM-SHA-256\$/);

    const dump = await source({ includeGlobals: true }).dump({ databases: [origin], signal: signal() });
    expect(dump.extension).toBe('.pgdumps');
    const bytes = await collect(dump.stream);
    await dump.done;
    // Version 2 of the multi-dump, globals section first.
    expect(bytes.subarray(0, 11).toString('latin1')).toBe('HFPGMULTI\n\x02');
    expect(String.fromCharCode(bytes[11]!)).toBe('G');
    expect(bytes.includes(Buffer.from(`CREATE ROLE ${owner};`))).toBe(true);

    // The database and the roles are gone before the restore, as on a fresh server.
    await dropDatabase(origin);
    await sql('postgres', `DROP ROLE "${owner}"`);
    await sql('postgres', `DROP ROLE "${reader}"`);
    const rolesBefore = await roleNames();
    const target = `${origin}_back`;
    created.push(target);
    try {
      const result = await source({ includeGlobals: true, restoreNoOwner: false }).restore(Readable.from([bytes]), {
        target: { databaseMapping: { [origin]: target } },
        signal: signal(),
      });
      // "role root already exists" and the like are expected and not reported.
      expect(result.warnings.filter((w) => /already exists/.test(w))).toEqual([]);
      expect(await roleAuth(owner)).toEqual(ownerAuth);
      expect(await ownerOf(target, 'items')).toBe(owner);
      expect(await ownerOf(target, 'notes')).toBe(server.user);
      const [grant] = await sql<{ ok: boolean }>(target, `SELECT has_table_privilege($1, 'notes', 'SELECT') AS ok`, [reader]);
      expect(grant!.ok).toBe(true);
      expect(await checksums(target)).toEqual(originExpected);
    } finally {
      // The restored tables belong to the roles: the database goes first.
      await dropDatabase(target);
      await dropRolesRecreatedBy(bytes, rolesBefore, [owner, reader]);
    }
  });

  it('without restoreGlobals, the globals of a backup are skipped', async () => {
    const absent = await role('skipped', 'x-pw');
    const dump = await source({ includeGlobals: true }).dump({ databases: [seeded], signal: signal() });
    const bytes = await collect(dump.stream);
    await sql('postgres', `DROP ROLE "${absent}"`);
    const target = `${seeded}_noglob`;
    created.push(target);
    await source({ restoreGlobals: false }).restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    expect(await roleNames()).not.toContain(absent);
    expect(await checksums(target)).toEqual(expected);
  });

  it('a backup made without globals (plain dump and version 1 multi-dump) still restores with globals switched on', async () => {
    const plain = await source().dump({ databases: [seeded], signal: signal() });
    const plainBytes = await collect(plain.stream);
    expect(plainBytes.subarray(0, 5).toString('latin1')).toBe('PGDMP');
    const second = await database('v1');
    const secondExpected = await seed(second, 50);
    const multi = await source().dump({ databases: [seeded, second], signal: signal() });
    const multiBytes = await collect(multi.stream);
    expect(multiBytes.subarray(0, 11).toString('latin1')).toBe('HFPGMULTI\n\x01');

    const withGlobals = source({ includeGlobals: true, restoreGlobals: true });
    const plainTarget = `${seeded}_old_plain`;
    const mapping = { [seeded]: `${seeded}_old_m1`, [second]: `${second}_old_m2` };
    created.push(plainTarget, ...Object.values(mapping));
    await withGlobals.restore(Readable.from([plainBytes]), { target: { database: plainTarget }, signal: signal() });
    await withGlobals.restore(Readable.from([multiBytes]), { target: { databaseMapping: mapping }, signal: signal() });
    expect(await checksums(plainTarget)).toEqual(expected);
    expect(await checksums(mapping[seeded]!)).toEqual(expected);
    expect(await checksums(mapping[second]!)).toEqual(secondExpected);
  });

  it('maps a plain dump by the database name its header records', async () => {
    const dump = await source().dump({ databases: [seeded], signal: signal() });
    const bytes = await collect(dump.stream);
    expect(parseDumpHeader(bytes)?.database).toBe(seeded);
    const target = `${seeded}_mapped`;
    created.push(target);
    await source().restore(Readable.from([bytes]), { target: { databaseMapping: { other_db: 'not_this_one', [seeded]: target } }, signal: signal() });
    expect(await checksums(target)).toEqual(expected);
    expect(await databaseExists('not_this_one')).toBe(false);
  });

  it('restoreCreateDatabase off refuses a missing target before creating it; an existing one is restored into', async () => {
    const dump = await source().dump({ databases: [seeded], signal: signal() });
    const bytes = await collect(dump.stream);
    const missing = `${seeded}_missing`;
    created.push(missing);
    const error = await source({ restoreCreateDatabase: false })
      .restore(Readable.from([bytes]), { target: { database: missing }, signal: signal() })
      .catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('NOT_FOUND');
    expect((error as Error).message).toMatch(/target database ".*_missing" does not exist and restoreCreateDatabase is off/);
    expect(await databaseExists(missing)).toBe(false);

    const existing = await database('exists');
    await source({ restoreCreateDatabase: false }).restore(Readable.from([bytes]), { target: { database: existing }, signal: signal() });
    expect(await checksums(existing)).toEqual(expected);
  });

  it('restoreClean replaces changed rows on a second restore; without it pg_restore fails on the existing objects', async () => {
    const dump = await source().dump({ databases: [seeded], signal: signal() });
    const bytes = await collect(dump.stream);
    const target = await database('clean');
    await source().restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    await sql(target, `DELETE FROM items WHERE id <= 100`);
    await source({ restoreClean: true }).restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    expect(await checksums(target)).toEqual(expected);
    await expect(
      source({ restoreClean: false }).restore(Readable.from([bytes]), { target: { database: target }, signal: signal() }),
    ).rejects.toThrow(/pg_restore into ".*" failed .*already exists/s);
  });

  it('restoreNoOwner (the default) gives every object to the restoring role', async () => {
    const owner = await role('noowner', 'pw');
    const origin = await database('noown');
    await seed(origin, 10);
    await sql(origin, `ALTER TABLE items OWNER TO "${owner}"`);
    const dump = await source().dump({ databases: [origin], signal: signal() });
    const bytes = await collect(dump.stream);
    const target = `${origin}_r`;
    created.push(target);
    await source().restore(Readable.from([bytes]), { target: { database: target }, signal: signal() });
    expect(await ownerOf(target, 'items')).toBe(server.user);
    const owned = `${origin}_owned`;
    created.push(owned);
    await source({ restoreNoOwner: false }).restore(Readable.from([bytes]), { target: { database: owned }, signal: signal() });
    expect(await ownerOf(owned, 'items')).toBe(owner);
    await dropDatabase(owned);
  });

  it('refuses a plain dump recorded from a newer major version before anything is written', async () => {
    const dump = await source().dump({ databases: [seeded], signal: signal() });
    const bytes = withServerVersion(await collect(dump.stream), '99');
    expect(parseDumpHeader(bytes)?.serverVersion).toMatch(/^99\./);
    const target = `${seeded}_newer`;
    created.push(target);
    const error = await source().restore(Readable.from([bytes]), { target: { database: target }, signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('CONFIG');
    expect((error as Error).message).toMatch(/comes from PostgreSQL 99\.\d+ \(major 99\), newer than the target server's PostgreSQL 15\.\d+ \(major 15\).*Nothing was written/);
    expect(await databaseExists(target)).toBe(false);
  });

  it('refuses a globals backup recorded from a newer major version before any role or database is created', async () => {
    const absent = await role('newer', 'pw');
    const dump = await source({ includeGlobals: true }).dump({ databases: [seeded], signal: signal() });
    const original = await collect(dump.stream);
    await sql('postgres', `DROP ROLE "${absent}"`);
    // The recorded version of the globals section (and of the database header) says 99.
    const bytes = reframe(original, (type, payload) => {
      if (type !== 'G' && type !== 'D') return payload;
      const header = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
      return Buffer.from(JSON.stringify({ ...header, serverVersion: '99.1' }));
    });
    const target = `${seeded}_newer_g`;
    created.push(target);
    await expect(
      source({ includeGlobals: true }).restore(Readable.from([bytes]), { target: { databaseMapping: { [seeded]: target } }, signal: signal() }),
    ).rejects.toThrow(/the backup comes from PostgreSQL 99\.1 \(major 99\), newer than the target server's PostgreSQL 15/);
    expect(await roleNames()).not.toContain(absent);
    expect(await databaseExists(target)).toBe(false);
  });

  it('a non-superuser cannot read role passwords: includeGlobals fails dump() before its first byte; without passwords it works', async () => {
    const limited = await role('limited', 'pw');
    const failed = await source({ user: limited, includeGlobals: true }).dump({ databases: [seeded], signal: signal() }).catch((e: unknown) => e);
    expect(isAdapterError(failed)).toBe(true);
    expect((failed as Error).message).toMatch(/pg_dumpall of the cluster globals failed.*pg_authid/s);
    await sql('postgres', `GRANT pg_read_all_data TO "${limited}"`);
    const dump = await source({ user: limited, includeGlobals: true, globalsWithoutRolePasswords: true }).dump({ databases: [seeded], signal: signal() });
    const bytes = await collect(dump.stream);
    await dump.done;
    expect(bytes.includes(Buffer.from(`CREATE ROLE ${limited};`))).toBe(true);
    expect(bytes.includes(Buffer.from('SCRAM-SHA-256$'))).toBe(false);
  });
});
