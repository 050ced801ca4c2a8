import type { HoldfastPlugin, PluginMigration } from '@holdfast/kernel';

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
