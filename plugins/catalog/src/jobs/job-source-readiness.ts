import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigService } from '../adapter-configs/adapter-config-service.js';
import { credentialsByRole } from '../credentials/credential-store.js';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import type { CatalogDeps } from '../shared/deps.js';
import { assertPointInTimeReady } from '../shared/point-in-time-readiness.js';

/**
 * Before a job is saved on source `sourceId`: a source in a point-in-time mode must pass its readiness check (422
 * naming every problem otherwise, see shared/point-in-time-readiness.ts). A source in another mode is not contacted.
 * A missing source, or one whose adapter is not installed, is left to the reference check and the run.
 */
export async function assertJobSourceReady(deps: CatalogDeps, em: EntityManager, sourceId: string): Promise<void> {
  const row = await em.findOne(AdapterConfigEntity, { id: sourceId });
  if (row?.type !== 'database') return;
  const installed = deps.registry().get('source', row.adapterId);
  if (!installed) return;
  const config = new AdapterConfigService(deps).plainConfig(row);
  const credentials = await credentialsByRole(em, deps.box(), row);
  await assertPointInTimeReady(deps, { name: row.name, definition: installed.definition, config, credentials });
}
