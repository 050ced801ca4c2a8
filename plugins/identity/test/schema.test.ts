import { afterEach, describe, expect, it } from 'vitest';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { openDatabase, openLibsql, openPostgres, type TestDatabase } from './support/database.js';

let db: TestDatabase | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

describe('identity schema', () => {
  it('on PostgreSQL the knex migration creates exactly what the entities describe (empty schema diff)', async () => {
    db = await openPostgres();
    const diff = await db.database.orm.schema.getUpdateSchemaSQL({ wrap: false, safe: true });
    expect(diff.trim()).toBe('');
  });

  // MikroORM's SQLite comparator rebuilds tables over type-name spellings (varchar vs text), so the SQLite check
  // compares columns, nullability and index names directly.
  it('on libsql every entity column exists with the declared nullability, and every declared index exists', async () => {
    db = await openLibsql();
    const knex = (db.database.em() as SqlEntityManager).getKnex();
    for (const meta of Object.values(db.database.orm.getMetadata().getAll())) {
      const columns = (await knex.raw(`pragma table_info(\`${meta.tableName}\`)`)) as { name: string; notnull: number }[];
      const byName = new Map(columns.map((c) => [c.name, c]));
      for (const prop of meta.props) {
        const column = byName.get(prop.fieldNames[0]!);
        expect(column, `${meta.tableName}.${prop.fieldNames[0]}`).toBeDefined();
        if (!prop.primary) expect(column!.notnull === 0, `${meta.tableName}.${prop.fieldNames[0]} nullable`).toBe(!!prop.nullable);
      }
      const indexes = ((await knex.raw(`pragma index_list(\`${meta.tableName}\`)`)) as { name: string }[]).map((i) => i.name);
      const declared = [
        ...meta.indexes.map((i) => i.name),
        ...meta.uniques.map((u) => u.name),
        ...meta.props.flatMap((p) => [p.index, p.unique].filter((n): n is string => typeof n === 'string')),
      ];
      for (const name of declared) expect(indexes, `${meta.tableName} index ${name}`).toContain(name);
    }
  });

  it('the rate-limit counter table exists only on PostgreSQL', async () => {
    for (const dialect of ['sqlite', 'postgresql'] as const) {
      const opened = await openDatabase(dialect);
      const knex = (opened.database.em() as SqlEntityManager).getKnex();
      expect(await knex.schema.hasTable('rate_limits')).toBe(dialect === 'postgresql');
      await opened.close();
    }
  });
});
