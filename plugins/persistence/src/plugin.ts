import { randomUUID } from 'node:crypto';
import type { HoldfastPlugin } from '@holdfast/kernel';
import { ORM_DATABASE, type SqlEntityManager } from '@holdfast/orm-port';
import { createInstanceTable, InstanceRecord } from './entities/instance-record.js';

/**
 * The persistence feature plugin: contributes the instance record and its migration, and on start makes sure the
 * installation has its one instance row (created on the first start, kept forever after).
 */
export function createPersistencePlugin(): HoldfastPlugin {
  return {
    name: 'persistence',
    requires: [ORM_DATABASE],
    entities: [InstanceRecord],
    migrations: [createInstanceTable],
    async start(container) {
      const em = container.resolve(ORM_DATABASE).em();
      await ensureInstanceRecord(em);
    },
  };
}

/** Returns the installation's instance record, creating it on first use. */
export async function ensureInstanceRecord(em: SqlEntityManager): Promise<{ id: string; createdAt: Date }> {
  const [existing] = await em.find(InstanceRecord, {}, { orderBy: { createdAt: 'asc' }, limit: 1 });
  if (existing) return existing;
  const created = em.create(InstanceRecord, { id: randomUUID(), createdAt: new Date() });
  await em.persistAndFlush(created);
  return created;
}
