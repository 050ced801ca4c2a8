import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigService } from '../adapter-configs/adapter-config-service.js';
import { credentialsByRole } from '../credentials/credential-store.js';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import type { CatalogDeps } from '../shared/deps.js';
import { HttpError } from '@holdfast/kernel';
import { assertPointInTimeReady, pointInTimeLogKind, type SourceToCheck } from '../shared/point-in-time-readiness.js';

/**
 * Before a job is saved on source `sourceId`: a source in a point-in-time mode must pass its readiness check (422
 * naming every problem otherwise, see shared/point-in-time-readiness.ts). A source in another mode is not contacted.
 * A missing source, or one whose adapter is not installed, is left to the reference check and the run.
 */
export async function assertJobSourceReady(deps: CatalogDeps, em: EntityManager, sourceId: string): Promise<void> {
  const source = await sourceToCheck(deps, em, sourceId);
  if (source) await assertPointInTimeReady(deps, source);
}

/**
 * A job with a test restore on a MySQL/MariaDB point-in-time source is refused (422): such a test restore would build
 * a database on the source's own production server, and is not built (the engine refuses it at run time too, and a
 * scheduled one would raise a system error at every tick). Answered from the config; the server is not contacted.
 */
export async function assertTestRestoreSupported(deps: CatalogDeps, em: EntityManager, sourceId: string): Promise<void> {
  const source = await sourceToCheck(deps, em, sourceId);
  if (!source || (await pointInTimeLogKind(deps, source)) !== 'mysql-binlog') return;
  throw new HttpError(
    422,
    `source "${source.name}" is a MySQL/MariaDB point-in-time source: test restores of such jobs are not supported yet (one would build a database on the source's own server); remove testRestore, or restore to an instant with POST /api/jobs/:id/point-in-time/restore into a new database`,
    { source: source.name, field: 'testRestore' },
  );
}

/** The stored source `sourceId` as a readiness check needs it; null when it is missing, not a database or not installed. */
async function sourceToCheck(deps: CatalogDeps, em: EntityManager, sourceId: string): Promise<SourceToCheck | null> {
  const row = await em.findOne(AdapterConfigEntity, { id: sourceId });
  if (row?.type !== 'database') return null;
  const installed = deps.registry().get('source', row.adapterId);
  if (!installed) return null;
  const config = new AdapterConfigService(deps).plainConfig(row);
  const credentials = await credentialsByRole(em, deps.box(), row);
  return { name: row.name, definition: installed.definition, config, credentials };
}
