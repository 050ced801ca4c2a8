import { TOKENS } from '@holdfast/kernel';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { DbVersionHistoryEntity } from '../entities/version-history.js';
import { iso, newId, parseJsonColumn, type CatalogDeps } from '../shared/deps.js';

/** What a check, a health check or a backup detected. */
export interface DetectedVersion {
  version: string;
  /** `undefined`: the detection did not learn the edition (a backup's stats); the latest known one is kept. */
  edition?: string | null;
}

/** One row as the API answers it. */
export interface VersionHistoryEntry {
  id: string;
  adapterConfigId: string;
  previousVersion: string | null;
  newVersion: string;
  edition: string | null;
  detectedAt: string;
}

/** `-1`, `0` or `1` comparing dotted versions by their numbers (`15.10` > `15.9`); text parts compare as text. */
export function compareVersions(a: string, b: string): number {
  const parts = (value: string) => value.split(/[^0-9A-Za-z]+/).filter(Boolean);
  const [left, right] = [parts(a), parts(b)];
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const [x, y] = [left[index] ?? '0', right[index] ?? '0'];
    const [nx, ny] = [Number(x), Number(y)];
    const order = Number.isFinite(nx) && Number.isFinite(ny) ? Math.sign(nx - ny) : x.localeCompare(y);
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * SPEC "DbVersionHistory" and the `db_version_changed` event. Every detection goes through {@link record}: the first
 * observation of a source adds a row without a previous version and raises nothing; a different version or edition
 * adds a row and raises the event (a lower version is a downgrade). The latest detection is kept in the source's
 * `metadata` (`version`, `edition`, `versionDetectedAt`).
 */
export class VersionHistory {
  constructor(private readonly deps: CatalogDeps) {}

  /** Records a detection; answers whether it was the first one, unchanged, or a change. */
  async record(configId: string, detected: DetectedVersion): Promise<'first' | 'unchanged' | 'changed'> {
    const em = this.deps.em();
    const config = await em.findOne(AdapterConfigEntity, { id: configId });
    if (!config || config.type !== 'database' || !detected.version) return 'unchanged';
    const latest = await em.findOne(DbVersionHistoryEntity, { adapterConfigId: configId }, { orderBy: { detectedAt: 'desc', id: 'desc' } });
    const edition = detected.edition === undefined ? (latest?.edition ?? null) : detected.edition;
    if (latest && latest.newVersion === detected.version && (latest.edition ?? null) === edition) return 'unchanged';
    const detectedAt = new Date();
    em.create(DbVersionHistoryEntity, { id: newId(), adapterConfigId: configId, previousVersion: latest?.newVersion ?? null, newVersion: detected.version, edition, detectedAt });
    const metadata = parseJsonColumn<Record<string, unknown>>(config.metadata, {});
    em.assign(config, { metadata: JSON.stringify({ ...metadata, version: detected.version, edition, versionDetectedAt: detectedAt.toISOString() }) });
    await em.flush();
    if (!latest) return 'first';
    const events = this.deps.container.isRegistered(TOKENS.EventBus, true) ? this.deps.container.resolve(TOKENS.EventBus) : undefined;
    await events
      ?.emit('db_version_changed', {
        configId,
        configName: config.name,
        previousVersion: latest.newVersion,
        newVersion: detected.version,
        edition,
        isDowngrade: compareVersions(detected.version, latest.newVersion) < 0,
      })
      .catch((error: unknown) => this.deps.logger.warn({ err: String(error), configId }, 'db_version_changed listener failed'));
    return 'changed';
  }

  /** One page of a source's history, newest first. */
  async page(configId: string, limit: number, offset: number): Promise<{ entries: VersionHistoryEntry[]; total: number }> {
    const em = this.deps.em();
    const [rows, total] = await em.findAndCount(
      DbVersionHistoryEntity,
      { adapterConfigId: configId },
      { orderBy: { detectedAt: 'desc', id: 'desc' }, limit, offset },
    );
    return {
      total,
      entries: rows.map((row) => ({
        id: row.id,
        adapterConfigId: row.adapterConfigId,
        previousVersion: row.previousVersion ?? null,
        newVersion: row.newVersion,
        edition: row.edition ?? null,
        detectedAt: iso(row.detectedAt)!,
      })),
    };
  }
}
