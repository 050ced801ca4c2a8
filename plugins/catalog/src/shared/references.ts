import type { EntityManager } from '@mikro-orm/knex';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { JobDestinationEntity, JobEntity } from '../entities/jobs.js';
import { NotificationTemplateEntity } from '../entities/templates.js';
import { parseJsonColumn } from './deps.js';

/** A job named in a 409. */
export interface JobRef {
  id: string;
  name: string;
}

async function jobsByIds(em: EntityManager, ids: Iterable<string>): Promise<JobRef[]> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const jobs = await em.find(JobEntity, { id: { $in: unique } }, { orderBy: { name: 'asc' }, fields: ['id', 'name'] });
  return jobs.map((job) => ({ id: job.id, name: job.name }));
}

/** Jobs whose column `field` equals `id`. */
export async function jobsWhere(
  em: EntityManager,
  field: 'sourceId' | 'encryptionProfileId' | 'namingTemplateId' | 'schedulePresetId' | 'notificationTemplateId',
  id: string,
): Promise<JobRef[]> {
  const jobs = await em.find(JobEntity, { [field]: id }, { orderBy: { name: 'asc' }, fields: ['id', 'name'] });
  return jobs.map((job) => ({ id: job.id, name: job.name }));
}

/** Jobs that use an adapter config as source or destination. */
export async function jobsUsingAdapterConfig(em: EntityManager, configId: string): Promise<JobRef[]> {
  const destinations = await em.find(JobDestinationEntity, { configId }, { fields: ['jobId'] });
  const sources = await em.find(JobEntity, { sourceId: configId }, { fields: ['id'] });
  return jobsByIds(em, [...destinations.map((d) => d.jobId), ...sources.map((s) => s.id)]);
}

/** Jobs with a destination on retention policy `policyId`. */
export async function jobsUsingRetentionPolicy(em: EntityManager, policyId: string): Promise<JobRef[]> {
  const destinations = await em.find(JobDestinationEntity, { retentionPolicyId: policyId }, { fields: ['jobId'] });
  return jobsByIds(em, destinations.map((d) => d.jobId));
}

/** Adapter configs that refer to credential profile `credentialId`, and the jobs using those configs. */
export async function usersOfCredential(
  em: EntityManager,
  credentialId: string,
): Promise<{ adapters: Array<{ id: string; name: string; type: string; role: 'primary' | 'ssh' }>; jobs: JobRef[] }> {
  const configs = await em.find(
    AdapterConfigEntity,
    { $or: [{ primaryCredentialId: credentialId }, { sshCredentialId: credentialId }] },
    { orderBy: { name: 'asc' } },
  );
  const adapters = configs.map((config) => ({
    id: config.id,
    name: config.name,
    type: config.type,
    role: (config.primaryCredentialId === credentialId ? 'primary' : 'ssh') as 'primary' | 'ssh',
  }));
  const jobs: JobRef[] = [];
  for (const config of configs) jobs.push(...(await jobsUsingAdapterConfig(em, config.id)));
  const seen = new Set<string>();
  return { adapters, jobs: jobs.filter((job) => !seen.has(job.id) && seen.add(job.id)) };
}

/** Notification templates that bind channel `channelId`. */
export async function templatesBindingChannel(em: EntityManager, channelId: string): Promise<Array<{ id: string; name: string }>> {
  const templates = await em.find(NotificationTemplateEntity, {}, { orderBy: { name: 'asc' } });
  return templates
    .filter((template) => parseJsonColumn<Array<{ channelId?: string }>>(template.bindings, []).some((b) => b.channelId === channelId))
    .map((template) => ({ id: template.id, name: template.name }));
}
