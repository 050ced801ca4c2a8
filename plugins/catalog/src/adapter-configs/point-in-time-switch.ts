import type { AnyAdapterDefinition } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { credentialsByRole } from '../credentials/credential-store.js';
import type { CatalogDeps } from '../shared/deps.js';
import { assertPointInTimeReady, isPointInTimeSource } from '../shared/point-in-time-readiness.js';
import { jobsWhere } from '../shared/references.js';

type CredentialRefs = { primaryCredentialId?: string | null; sshCredentialId?: string | null };

/** A stored source before an update and the same source as the update would store it. */
export interface SourceUpdate {
  id: string;
  name: string;
  definition: AnyAdapterDefinition;
  before: { config: Record<string, unknown>; refs: CredentialRefs };
  after: { config: Record<string, unknown>; refs: CredentialRefs };
}

/**
 * A source that jobs use, switched from another mode into a point-in-time mode, turns those jobs into point-in-time
 * jobs: it must pass the same readiness check as saving such a job (422 naming every problem, nothing saved). Other
 * edits of a source already in a point-in-time mode are not checked, so a password or host can still be corrected
 * while the server is down; test-connection and the health checks report such a source.
 */
export async function assertPointInTimeSwitchReady(deps: CatalogDeps, em: EntityManager, update: SourceUpdate): Promise<void> {
  if (update.definition.kind !== 'source') return;
  if ((await jobsWhere(em, 'sourceId', update.id)).length === 0) return;
  const box = deps.box();
  const after = { name: update.name, definition: update.definition, config: update.after.config, credentials: await credentialsByRole(em, box, update.after.refs) };
  if (!(await isPointInTimeSource(deps, after))) return;
  const before = { ...after, config: update.before.config, credentials: await credentialsByRole(em, box, update.before.refs) };
  if (await isPointInTimeSource(deps, before)) return;
  await assertPointInTimeReady(deps, after);
}
