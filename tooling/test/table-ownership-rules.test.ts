// Regression guard of issue 40 item 1: no plugin queries a table another plugin's migrations create; it reads
// through a kernel port that plugin provides. The review of 2026-12 counted 12 such queries, all in observability.
// The last of the 12 moved with the system task schedules (observability's own `system_task_schedules`); before it,
// `storage_snapshots` (the engine's `TOKENS.StorageUsage`) and the health columns of `adapter_configs` (observability's
// `adapter_health`, served as `TOKENS.AdapterHealth`). The migrations that copied the old values over did so once, in
// raw SQL this rule does not see: a one-time handover, not a runtime query. None is allowed now.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeForeignQuery, foreignTableQueries, tableOwners, type PluginSource } from './table-rules.js';
import { readWorkspace, REPO_ROOT } from './workspace.js';

let sources: PluginSource[];

async function pluginSources(): Promise<PluginSource[]> {
  const plugins = (await readWorkspace()).filter((pkg) => pkg.dir.startsWith('plugins/'));
  const all: PluginSource[] = [];
  for (const plugin of plugins) {
    const src = join(REPO_ROOT, plugin.dir, 'src');
    const names = (await readdir(src, { recursive: true }).catch(() => [] as string[])).map(String).filter((name) => /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts'));
    for (const name of names) all.push({ plugin: plugin.name, file: `src/${name}`, text: await readFile(join(src, name), 'utf8') });
  }
  return all;
}

beforeAll(async () => {
  sources = await pluginSources();
});

describe('one owner per table, in the queries', () => {
  it('finds the owner of every table a plugin creates, literal or constant names', () => {
    const owners = tableOwners(sources);
    expect(owners.get('executions')).toBe('@holdfast/engine');
    expect(owners.get('adapter_configs')).toBe('@holdfast/catalog');
    expect(owners.get('notification_log')).toBe('@holdfast/notifications');
    expect(owners.get('download_tokens')).toBe('@holdfast/storage-browser');
    expect(owners.get('task_leases')).toBe('@holdfast/observability');
    expect(owners.get('system_task_schedules')).toBe('@holdfast/observability');
  });

  it('no plugin queries another plugin\'s table', () => {
    expect(foreignTableQueries(sources).map(describeForeignQuery), 'foreign-table queries').toEqual([]);
  });

  it('flags a query on another plugin\'s table and leaves a plugin\'s own tables alone (the rule can fail)', () => {
    const synthetic: PluginSource[] = [
      { plugin: 'a', file: 'src/migration.ts', text: "await knex.schema.createTable('orders', (t) => {});\nconst TABLE = 'lines';\nawait knex.schema.createTable(TABLE, (t) => {});" },
      { plugin: 'b', file: 'src/migration.ts', text: "await knex.schema.createTable('reports', (t) => {});" },
      { plugin: 'b', file: 'src/read.ts', text: "const LINES = 'lines';\nawait this.knex()('reports').select();\nawait db.em().getKnex()('orders').update({ x: 1 });\nawait knex()(LINES).first();" },
      { plugin: 'a', file: 'src/own.ts', text: "await knex()('orders').select();" },
    ];
    expect(foreignTableQueries(synthetic)).toEqual([
      { plugin: 'b', file: 'src/read.ts', line: 3, table: 'orders', owner: 'a' },
      { plugin: 'b', file: 'src/read.ts', line: 4, table: 'lines', owner: 'a' },
    ]);
    expect(describeForeignQuery(foreignTableQueries(synthetic)[0]!)).toBe('b src/read.ts:3 queries "orders", a table of a; read it through a kernel port a provides (kernel/src/ports/)');
  });
});
