import type { OrmDatabase } from '@holdfast/orm-port';
import type { DeliveryStats } from '@holdfast/kernel';

/** The notifications plugin's {@link DeliveryStats}: failed rows of its `notification_log`, by event type. */
export function deliveryStatsPort(database: () => OrmDatabase): DeliveryStats {
  return {
    async failuresByEvent() {
      const rows: Array<{ event_type: string; n: number | string }> = await database()
        .em()
        .getKnex()('notification_log')
        .select('event_type')
        .count({ n: '*' })
        .where({ status: 'Failed' })
        .groupBy('event_type');
      return rows.map((row) => ({ event: row.event_type, count: Number(row.n) }));
    },
  };
}
