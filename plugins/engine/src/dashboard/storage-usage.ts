import type { OrmDatabase } from '@holdfast/orm-port';
import type { StorageUsage, StorageUsagePoint } from '@holdfast/kernel';
import { dateOf } from '../history/history-store.js';

type SnapshotRow = { size: number | string; count: number | string; created_at: Date | number | string };

function pointOf(row: SnapshotRow): StorageUsagePoint {
  return { size: Number(row.size), count: Number(row.count), createdAt: dateOf(row.created_at) };
}

/**
 * The engine's {@link StorageUsage}: reads of its `storage_snapshots` table (indexed by destination and time), so
 * observability's storage alerts and usage route never query the table themselves.
 */
export function storageUsagePort(database: () => OrmDatabase): StorageUsage {
  const knex = () => database().em().getKnex();
  return {
    async latest(configId, limit) {
      const rows: SnapshotRow[] = await knex()('storage_snapshots')
        .select('size', 'count', 'created_at')
        .where({ adapter_config_id: configId })
        .orderBy('created_at', 'desc')
        .limit(limit);
      return rows.map(pointOf);
    },
    async between(configId, from, to, limit) {
      const platform = database().em().getPlatform();
      const rows: SnapshotRow[] = await knex()('storage_snapshots')
        .select('size', 'count', 'created_at')
        .where({ adapter_config_id: configId })
        .andWhere('created_at', '>=', platform.processDateProperty(from) as never)
        .andWhere('created_at', '<=', platform.processDateProperty(to) as never)
        .orderBy('created_at', 'asc')
        .limit(limit);
      return rows.map(pointOf);
    },
  };
}
