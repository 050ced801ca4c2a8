import type { AbstractSqlConnection, Knex } from '@mikro-orm/knex';
import type { OwnedMigration } from './migrations.js';

/**
 * Applies the plugins' migrations and records them, in the same table MikroORM's migrator wrote (same name, same
 * columns: `id`, `name`, `executed_at`), so a database migrated by an earlier version goes on where it stopped.
 *
 * Why not `@mikro-orm/migrations`: it loads `umzug`, which loads its command-line interface and with it
 * `@rushstack/ts-command-line` and `@rushstack/node-core-library`, about 4.4 MiB of V8 heap held for the life of
 * every server process, for a feature Holdfast never uses (docs/benchmarks.md, "Session 16"). What Holdfast needs is
 * small: apply what is missing, in name order, each migration in its own transaction together with its record.
 */
export class MigrationRunner {
  /**
   * PostgreSQL: the schema MikroORM's migrator always put its table in (its default schema, `public`, named in every
   * statement), whatever the connection's `search_path` says; the same here, so an upgraded database finds its record.
   */
  private readonly schema: string | undefined;

  constructor(
    private readonly connection: AbstractSqlConnection,
    private readonly tableName: string,
    private readonly migrations: readonly OwnedMigration[],
    private readonly dialect: 'sqlite' | 'postgresql',
  ) {
    this.schema = dialect === 'postgresql' ? 'public' : undefined;
  }

  /** Names of the migrations not applied yet, in the order they would run. */
  async pending(): Promise<string[]> {
    const applied = await this.appliedNames();
    return this.migrations.map(({ migration }) => migration.name).filter((name) => !applied.has(name));
  }

  /**
   * Applies every pending migration in order; resolves the names applied. A failing migration rolls back with its
   * record, stays pending, and stops the run with an error naming it (the ones before it stay applied).
   */
  async up(onApplied: (name: string) => void = () => undefined): Promise<string[]> {
    const applied = await this.appliedNames();
    const done: string[] = [];
    for (const { plugin, migration } of this.migrations) {
      if (applied.has(migration.name)) continue;
      try {
        await this.connection.transactional(async (trx: Knex.Transaction) => {
          await migration.up(trx, this.dialect);
          await this.table(trx).insert({ name: migration.name });
        });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`Migration ${migration.name} of plugin ${plugin} failed and was rolled back: ${reason}`, { cause: error });
      }
      done.push(migration.name);
      onApplied(migration.name);
    }
    return done;
  }

  private async appliedNames(): Promise<Set<string>> {
    await this.ensureTable();
    const rows: Array<{ name: string }> = await this.table(this.connection.getKnex()).select('name');
    return new Set(rows.map((row) => row.name));
  }

  private table(knex: Knex): Knex.QueryBuilder {
    return this.schema ? knex(this.tableName).withSchema(this.schema) : knex(this.tableName);
  }

  private schemaBuilder(knex: Knex): Knex.SchemaBuilder {
    return this.schema ? knex.schema.withSchema(this.schema) : knex.schema;
  }

  /** The table as MikroORM's migrator created it, for a database that has none yet. */
  private async ensureTable(): Promise<void> {
    const knex = this.connection.getKnex();
    if (await this.schemaBuilder(knex).hasTable(this.tableName)) return;
    await this.schemaBuilder(knex).createTable(this.tableName, (table) => {
      table.increments('id');
      table.string('name');
      table.dateTime('executed_at').defaultTo(knex.fn.now());
    });
  }
}
