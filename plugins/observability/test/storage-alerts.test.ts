import { EventBus, type StorageAlertEvent, type StorageUsage, type StorageUsagePoint } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageAlerts } from '../src/index.js';
import type { StorageAlertSettings } from '../src/settings.js';
import { observabilityDatabase, type ObservabilityDatabase } from './support/database.js';

/** The engine's recorded snapshots as its `TOKENS.StorageUsage` port answers them (the engine's own test covers the table). */
function recordedSnapshots(): { usage: StorageUsage; record(configId: string, point: StorageUsagePoint): void } {
  const recorded: Array<{ configId: string; point: StorageUsagePoint }> = [];
  const of = (configId: string) => recorded.filter((entry) => entry.configId === configId).map((entry) => entry.point);
  return {
    record: (configId, point) => void recorded.push({ configId, point }),
    usage: {
      async latest(configId, limit) {
        return of(configId).reverse().slice(0, limit);
      },
      async between(configId, from, to, limit) {
        return of(configId).filter((point) => point.createdAt >= from && point.createdAt <= to).slice(0, limit);
      },
    },
  };
}

describe.each(['sqlite', 'postgresql'] as const)('storage alerts on %s', (dialect) => {
  let site: ObservabilityDatabase | undefined;
  afterEach(async () => {
    await site?.close();
    site = undefined;
  });

  it('usage spike against the previous snapshot, size limit and no-recent-backup once per episode, nothing for an empty destination', async () => {
    site = await observabilityDatabase(dialect);
    const db = site.db;
    const raised: StorageAlertEvent[] = [];
    const events = new EventBus();
    events.on('storage_alert', (alert) => void raised.push(alert));
    let settings: StorageAlertSettings = { usageSpikePercent: 50, sizeLimits: { dest: 1000 }, noBackupHours: 24 };
    let now = new Date('2026-11-24T12:00:00Z');
    const snapshots = recordedSnapshots();
    const alerts = new StorageAlerts({ database: () => db, usage: () => snapshots.usage, settings: async () => settings, events: () => events, logger: { debug() {}, info() {}, warn() {}, error() {} } as never, now: () => now });
    const snapshot = async (size: number, count: number, newestBackupAt: string | null) => {
      snapshots.record('dest', { size, count, createdAt: now });
      const result = await alerts.evaluate({ configId: 'dest', configName: 'Dest', adapterId: 'local', size, count, newestBackupAt });
      now = new Date(now.getTime() + 60_000);
      return result.map((alert) => alert.alert);
    };
    // First snapshot: nothing to compare with; the destination is empty (no backups): no stale alert.
    expect(await snapshot(0, 0, null)).toEqual([]);
    expect(await snapshot(100, 1, '2026-11-24T11:00:00Z')).toEqual([]); // growth from 0 is not a percentage
    expect(await snapshot(140, 2, '2026-11-24T12:01:00Z')).toEqual([]); // +40 %
    expect(await snapshot(210, 3, '2026-11-24T12:02:00Z')).toEqual(['usage_spike']); // +50 %
    expect(await snapshot(1000, 4, '2026-11-24T12:03:00Z')).toEqual(['usage_spike', 'size_limit']);
    expect(await snapshot(1001, 4, '2026-11-24T12:03:00Z')).toEqual([]); // same size-limit episode
    expect(await snapshot(900, 3, '2026-11-24T12:03:00Z')).toEqual([]); // cleared
    expect(await snapshot(1200, 4, '2026-11-24T12:03:00Z')).toEqual(['size_limit']); // +33 %: a new episode only
    now = new Date('2026-11-26T12:00:00Z');
    expect(await snapshot(1200, 4, '2026-11-24T12:03:00Z')).toEqual(['no_recent_backup']);
    expect(await snapshot(1200, 4, '2026-11-24T12:03:00Z')).toEqual([]);
    settings = { usageSpikePercent: null, sizeLimits: {}, noBackupHours: null };
    expect(await snapshot(99_999, 9, null)).toEqual([]);
    expect(raised.map((alert) => alert.alert)).toEqual(['usage_spike', 'usage_spike', 'size_limit', 'size_limit', 'no_recent_backup']);
    expect(raised[4]).toMatchObject({ configId: 'dest', hoursSinceLastBackup: 47 });
    expect(raised[2]).toMatchObject({ limit: 1000, size: 1000 });

    const usage = await alerts.usage('dest', new Date('2026-11-24T00:00:00Z'), new Date('2026-11-24T23:59:59Z'), 100);
    expect(usage.map((row) => row.size)).toEqual([0, 100, 140, 210, 1000, 1001, 900, 1200]);
    expect(usage[0]).toEqual({ size: 0, count: 0, createdAt: '2026-11-24T12:00:00.000Z' });
  });

  it('without the engine\'s StorageUsage port: no usage spike (nothing to compare) and no usage over time', async () => {
    site = await observabilityDatabase(dialect);
    const db = site.db;
    const settings: StorageAlertSettings = { usageSpikePercent: 1, sizeLimits: { dest: 10 }, noBackupHours: null };
    const alerts = new StorageAlerts({ database: () => db, usage: () => undefined, settings: async () => settings, events: () => undefined, logger: { debug() {}, info() {}, warn() {}, error() {} } as never });
    const alert = (size: number) => alerts.evaluate({ configId: 'dest', configName: 'Dest', adapterId: 'local', size, count: 1, newestBackupAt: null });
    expect((await alert(5)).map((raised) => raised.alert)).toEqual([]);
    expect((await alert(50)).map((raised) => raised.alert)).toEqual(['size_limit']);
    expect(await alerts.usage('dest', new Date(0), new Date(), 10)).toEqual([]);
  });
});
