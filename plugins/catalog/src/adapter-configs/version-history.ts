import { TOKENS } from '@holdfast/kernel';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { DbVersionHistoryEntity } from '../entities/version-history.js';
import { iso, newId, parseJsonColumn, type CatalogDeps } from '../shared/deps.js';

/** What a check, a health check or a backup detected. */
export interface DetectedVersion {
  version: string;
  /** `undefined` or `null`: the detection did not learn the edition (a backup's stats); the latest known one is kept. */
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
 * Detections are recorded one at a time in this process (they are rare and each is two reads and a write): a backup
 * and a health check finishing together must not both add a first row.
 */
let recordingTail: Promise<unknown> = Promise.resolve();

/** The latest detection, merged into the source's `metadata` (flushed by the caller). */
function rememberOnSource(config: { metadata?: string | null }, detection: Record<string, unknown>): void {
  const metadata = parseJsonColumn<Record<string, unknown>>(config.metadata, {});
  config.metadata = JSON.stringify({ ...metadata, ...detection });
}

/**
 * SPEC "DbVersionHistory" and the `db_version_changed` event. Every detection goes through {@link record}: the first
 * observation of a source adds a row without a previous version and raises nothing; a different version or known
 * edition adds a row and raises the event (a lower version is a downgrade); an edition learned for the version of the
 * latest row completes that row. The latest detection is kept in the source's
 * `metadata` (`version`, `edition`, `versionDetectedAt`).
 */
export class VersionHistory {
  constructor(private readonly deps: CatalogDeps) {}

  /** Records a detection; answers whether it was the first one, unchanged, or a change. */
  async record(configId: string, detected: DetectedVersion): Promise<'first' | 'unchanged' | 'changed'> {
    const current = recordingTail.then(() => this.recordNow(configId, detected));
    recordingTail = current.catch(() => undefined);
    return current;
  }

  private async recordNow(configId: string, detected: DetectedVersion): Promise<'first' | 'unchanged' | 'changed'> {
    const em = this.deps.em();
    const config = await em.findOne(AdapterConfigEntity, { id: configId });
    if (!config || config.type !== 'database' || !detected.version) return 'unchanged';
    const latest = await em.findOne(DbVersionHistoryEntity, { adapterConfigId: configId }, { orderBy: { detectedAt: 'desc', id: 'desc' } });
    // An edition not learned (a backup's stats) or not answered keeps the known one: unknown is no change.
    const edition = detected.edition ?? latest?.edition ?? null;
    if (latest && latest.newVersion === detected.version) {
      if ((latest.edition ?? null) === edition) return 'unchanged';
      // Same version, edition learned for the first time (a backup detected the version before any connection
      // test): the row is completed, not a change; a different known edition is one.
      if (latest.edition == null) {
        em.assign(latest, { edition });
        rememberOnSource(config, { edition });
        await em.flush();
        return 'unchanged';
      }
    }
    const detectedAt = new Date();
    em.create(DbVersionHistoryEntity, { id: newId(), adapterConfigId: configId, previousVersion: latest?.newVersion ?? null, newVersion: detected.version, edition, detectedAt });
    rememberOnSource(config, { version: detected.version, edition, versionDetectedAt: detectedAt.toISOString() });
    await em.flush();
    if (!latest) return 'first';
    const events = this.deps.container.resolve(TOKENS.EventBus);
    await events
      .emit('db_version_changed', {
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
