import type { HoldfastPlugin, PluginMigration } from '@holdfast/kernel';
import type { MigrationObject } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';

/** A plugin migration with the plugin that contributed it (for error messages). */
export interface OwnedMigration {
  plugin: string;
  migration: PluginMigration;
}

/**
 * Gathers every plugin's migrations, refuses a name contributed twice (naming both plugins), and orders them by
 * name with a plain code-point comparison so the order never depends on the machine's locale.
 */
export function collectMigrations(plugins: readonly HoldfastPlugin[]): OwnedMigration[] {
  const byName = new Map<string, OwnedMigration>();
  for (const plugin of plugins) {
    for (const migration of plugin.migrations ?? []) {
      if (typeof migration?.name !== 'string' || !migration.name.trim() || typeof migration.up !== 'function') {
        throw new Error(`Plugin ${plugin.name} contributes a migration without a name or an up() function`);
      }
      const existing = byName.get(migration.name);
      if (existing) {
        throw new Error(
          `Duplicate migration name "${migration.name}": contributed by plugin ${existing.plugin} and plugin ${plugin.name}`,
        );
      }
      byName.set(migration.name, { plugin: plugin.name, migration });
    }
  }
  return [...byName.values()].sort((a, b) => (a.migration.name < b.migration.name ? -1 : a.migration.name > b.migration.name ? 1 : 0));
}

/**
 * Wraps plugin migrations as MikroORM migration classes. MikroORM runs each inside its own transaction and hands
 * it the knex transaction as `ctx`; the plugin migration gets that transaction as its schema builder, so a
 * migration written once with the knex schema builder runs on both dialects and rolls back on failure.
 */
export function toMigrationsList(owned: readonly OwnedMigration[], dialect: 'sqlite' | 'postgresql'): MigrationObject[] {
  return owned.map(({ migration }) => {
    class PluginMigrationRunner extends Migration {
      override async up(): Promise<void> {
        await migration.up(this.ctx ?? this.getKnex(), dialect);
      }
    }
    return { name: migration.name, class: PluginMigrationRunner };
  });
}
