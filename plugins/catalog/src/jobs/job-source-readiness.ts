import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigService } from '../adapter-configs/adapter-config-service.js';
import { credentialsByRole } from '../credentials/credential-store.js';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import type { CatalogDeps } from '../shared/deps.js';
import { HttpError, type TestRestoreConfig } from '@holdfast/kernel';
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
 * A job with a test restore on a MySQL/MariaDB point-in-time source is refused (422) unless the target is a throwaway
 * database on a MySQL/MariaDB server: such a test restore rebuilds each database of the base in a scratch database
 * and replays the binary log into it (docs/pitr.md), so a directory (or any other) target cannot take it, and the
 * scratch server (`sourceId`) must be a source of the same adapter. The engine refuses the same at queue and run time;
 * refusing at save keeps a scheduled one from raising a system error at every tick. Answered from the config; no
 * server is contacted.
 */
export async function assertTestRestoreSupported(deps: CatalogDeps, em: EntityManager, sourceId: string, testRestore: TestRestoreConfig): Promise<void> {
  if (testRestore.target.type === 'directory') {
    // The engine makes and counts a folder scratch on the server's disk; a source on an agent restores onto its own.
    const row = await em.findOne(AdapterConfigEntity, { id: sourceId });
    if (row?.agentId) {
      throw new HttpError(422, `source "${row.name}" runs on a remote agent: test restores into a folder are not offered for it (docs/agents.md); use a database, sqlite or redis target`, {
        source: row.name,
        field: 'testRestore.target.type',
      });
    }
  }
  const source = await sourceToCheck(deps, em, sourceId);
  if (!source || (await pointInTimeLogKind(deps, source)) !== 'mysql-binlog') return;
  const { target } = testRestore;
  if (target.type !== 'database') {
    throw new HttpError(
      422,
      `source "${source.name}" is a MySQL/MariaDB point-in-time source: its test restore rebuilds each database of the base backup in a throwaway database on a MySQL/MariaDB server, so testRestore.target must be { "type": "database" } (the job's own server) or { "type": "database", "sourceId": "<a MySQL/MariaDB source>" }, not ${target.type}`,
      { source: source.name, field: 'testRestore.target.type' },
    );
  }
  if (!target.sourceId || target.sourceId === sourceId) return;
  const server = await em.findOne(AdapterConfigEntity, { id: target.sourceId });
  const jobSource = await em.findOne(AdapterConfigEntity, { id: sourceId });
  if (server && jobSource && server.adapterId !== jobSource.adapterId) {
    throw new HttpError(
      422,
      `source "${source.name}" is a MySQL/MariaDB point-in-time source: its test restore loads the base and replays the binary log with the ${jobSource.adapterId} source's tools, so testRestore.target.sourceId must name a ${jobSource.adapterId} source ("${server.name}" is ${server.adapterId})`,
      { source: source.name, field: 'testRestore.target.sourceId' },
    );
  }
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
