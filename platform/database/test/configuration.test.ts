import { describe, expect, it } from 'vitest';
import type { HoldfastPlugin } from '@holdfast/kernel';
import { collectMigrations, describeTarget, openDatabase, resolveConnectionTarget } from '../src/index.js';

const noop = async () => undefined;

describe('DATABASE_URL', () => {
  it('selects PostgreSQL for postgres:// and postgresql://', () => {
    expect(resolveConnectionTarget('/data', 'postgres://u@h/db').dialect).toBe('postgresql');
    expect(resolveConnectionTarget('/data', 'POSTGRESQL://u@h/db').dialect).toBe('postgresql');
  });

  it('selects the embedded file when unset or blank', () => {
    expect(resolveConnectionTarget('/srv/hf', undefined)).toEqual({ dialect: 'sqlite', file: '/srv/hf/holdfast.db' });
    expect(resolveConnectionTarget('/srv/hf', '  ')).toEqual({ dialect: 'sqlite', file: '/srv/hf/holdfast.db' });
  });

  it('refuses another scheme with a message naming the variable and not the password', async () => {
    const attempt = openDatabase({ dataDir: '/nonexistent', databaseUrl: 'mysql://admin:hunter2@db/holdfast', plugins: [] });
    await expect(attempt).rejects.toThrow(/DATABASE_URL has an unsupported scheme "mysql"/);
    await expect(attempt).rejects.not.toThrow(/hunter2/);
  });

  it('refuses a value without a scheme', () => {
    expect(() => resolveConnectionTarget('/data', 'localhost:5432/db')).toThrow(/DATABASE_URL has an unsupported scheme/);
  });

  it('hides the password when describing a PostgreSQL target', () => {
    const text = describeTarget({ dialect: 'postgresql', url: 'postgres://admin:hunter2@db:5432/holdfast' });
    expect(text).toBe('postgres://admin:***@db:5432/holdfast');
  });
});

describe('collectMigrations', () => {
  const plugin = (name: string, ...migrations: string[]): HoldfastPlugin => ({
    name,
    migrations: migrations.map((migration) => ({ name: migration, up: noop })),
  });

  it('orders migrations of all plugins by name', () => {
    const names = collectMigrations([plugin('b', '2-b', '0-b'), plugin('a', '1-a')]).map((m) => m.migration.name);
    expect(names).toEqual(['0-b', '1-a', '2-b']);
  });

  it('rejects a migration name contributed twice, naming both plugins', async () => {
    const plugins = [plugin('identity', '001-users'), plugin('catalog', '001-users')];
    expect(() => collectMigrations(plugins)).toThrow(
      'Duplicate migration name "001-users": contributed by plugin identity and plugin catalog',
    );
    await expect(openDatabase({ dataDir: '/nonexistent', plugins })).rejects.toThrow(/Duplicate migration name/);
  });

  it('rejects a migration without an up function, naming the plugin', () => {
    const broken = { name: 'broken', migrations: [{ name: 'x' } as never] };
    expect(() => collectMigrations([broken])).toThrow(/Plugin broken contributes a migration/);
  });
});
