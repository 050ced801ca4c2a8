import { ConflictError, NotFoundError, ValidationError, type TestRestoreConfig } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { JobDestinationEntity, JobEntity, type JobDestinationRow, type JobRow } from '../entities/jobs.js';
import { SchedulePresetEntity } from '../entities/templates.js';
import { withUniqueName } from '../shared/conflicts.js';
import { iso, newId, parseJsonColumn, type Actor, type CatalogDeps } from '../shared/deps.js';
import { assertCron } from '../templates/schedule-presets.js';
import { checkDestinations, checkJobReferences, checkTestRestore } from './job-references.js';
import { linkedNotifications } from './job-notifications.js';
import { checkArchiveOptions } from './archive-options.js';
import { checkTestRestoreEncryption } from './public-key-limits.js';
import { checkCompressionOptions } from './compression-options.js';
import { assertJobSourceReady, assertTestRestoreSupported } from './job-source-readiness.js';
import type { CreateJobInput, DestinationInput, JobView, UpdateJobInput } from './job-schemas.js';

/** CRUD and clone of jobs with their ordered destinations. */
export class JobService {
  constructor(private readonly deps: CatalogDeps) {}

  async view(row: JobRow, em: EntityManager = this.deps.em()): Promise<JobView> {
    const destinations = await em.find(JobDestinationEntity, { jobId: row.id }, { orderBy: { priority: 'asc', id: 'asc' } });
    const preset = row.schedulePresetId ? await em.findOne(SchedulePresetEntity, { id: row.schedulePresetId }) : null;
    return {
      id: row.id,
      name: row.name,
      schedule: row.schedule,
      effectiveSchedule: preset?.schedule ?? row.schedule,
      enabled: row.enabled,
      databases: parseJsonColumn<string[]>(row.databases, []),
      compression: row.compression as JobView['compression'],
      pgCompression: row.pgCompression,
      compressionLevel: row.compressionLevel ?? null,
      compressionThreads: row.compressionThreads ?? null,
      archiveFormat: (row.archiveFormat ?? 'PLAIN') as JobView['archiveFormat'],
      fullEveryRuns: row.fullEveryRuns ?? null,
      fullEveryDays: row.fullEveryDays ?? null,
      notificationEvents: row.notificationEvents as JobView['notificationEvents'],
      skipVerification: row.skipVerification,
      sourceId: row.sourceId,
      encryptionProfileId: row.encryptionProfileId ?? null,
      namingTemplateId: row.namingTemplateId ?? null,
      schedulePresetId: row.schedulePresetId ?? null,
      notificationTemplateId: row.notificationTemplateId ?? null,
      testRestore: parseJsonColumn<JobView['testRestore']>(row.testRestore ?? null, null),
      notifications: await linkedNotifications(em, row.notificationTemplateId ?? null),
      destinations: destinations.map((d: JobDestinationRow) => ({
        id: d.id,
        jobId: d.jobId,
        configId: d.configId,
        priority: d.priority,
        retention: parseJsonColumn<Record<string, unknown>>(d.retention, {}),
        retentionPolicyId: d.retentionPolicyId ?? null,
        transfer: (d.transfer ?? 'relay') as 'relay' | 'direct',
      })),
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    };
  }

  async list(visible: 'all' | string[]): Promise<JobView[]> {
    const em = this.deps.em();
    const where = visible === 'all' ? {} : { id: { $in: visible } };
    const rows = await em.find(JobEntity, where, { orderBy: { name: 'asc' } });
    return Promise.all(rows.map((row) => this.view(row, em)));
  }

  async find(id: string, em: EntityManager = this.deps.em()): Promise<JobRow> {
    const row = await em.findOne(JobEntity, { id });
    if (!row) throw new NotFoundError('Job not found');
    return row;
  }

  async get(id: string): Promise<JobView> {
    const em = this.deps.em();
    return this.view(await this.find(id, em), em);
  }

  async create(input: CreateJobInput, actor: Actor, auditDetails: Record<string, unknown> = {}): Promise<JobView> {
    const em = this.deps.em();
    checkCompressionOptions(input);
    await checkJobReferences(em, input);
    await checkArchiveOptions(em, this.deps.registry(), input);
    await checkTestRestore(em, this.deps.registry(), input.testRestore);
    await checkTestRestoreEncryption(em, { encryptionProfileId: input.encryptionProfileId, hasTestRestore: Boolean(input.testRestore) });
    if (input.testRestore) await assertTestRestoreSupported(this.deps, em, input.sourceId, input.testRestore);
    await checkDestinations(em, this.deps.registry(), input.destinations);
    const schedule = await this.scheduleOf(em, input.schedule, input.schedulePresetId ?? null);
    await this.assertNameFree(em, input.name);
    // Last, as it may wait for the source's server: a point-in-time source must be able to serve the job (422).
    await assertJobSourceReady(this.deps, em, input.sourceId);
    const id = newId();
    const now = new Date();
    await withUniqueName('A job', input.name, () =>
      em.transactional(async (tx) => {
        tx.create(JobEntity, {
          id,
          name: input.name,
          schedule,
          enabled: input.enabled,
          databases: JSON.stringify(input.databases),
          compression: input.compression,
          pgCompression: input.pgCompression,
          compressionLevel: input.compressionLevel,
          compressionThreads: input.compressionThreads,
          archiveFormat: input.archiveFormat,
          fullEveryRuns: input.fullEveryRuns,
          fullEveryDays: input.fullEveryDays,
          notificationEvents: input.notificationEvents,
          skipVerification: input.skipVerification,
          sourceId: input.sourceId,
          encryptionProfileId: input.encryptionProfileId ?? null,
          namingTemplateId: input.namingTemplateId ?? null,
          schedulePresetId: input.schedulePresetId ?? null,
          notificationTemplateId: input.notificationTemplateId ?? null,
          testRestore: input.testRestore ? JSON.stringify(input.testRestore) : null,
          createdAt: now,
          updatedAt: now,
        });
        this.addDestinations(tx, id, input.destinations);
      }),
    );
    await this.deps.audit.record(actor, 'CREATE', 'job', id, { name: input.name, ...auditDetails });
    return this.get(id);
  }

  async update(id: string, input: UpdateJobInput, actor: Actor): Promise<JobView> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const pick = <K extends keyof UpdateJobInput & keyof JobRow>(key: K) => (input[key] === undefined ? row[key] : input[key]);
    const refs = {
      sourceId: input.sourceId ?? row.sourceId,
      encryptionProfileId: pick('encryptionProfileId'),
      namingTemplateId: pick('namingTemplateId'),
      schedulePresetId: pick('schedulePresetId'),
      notificationTemplateId: pick('notificationTemplateId'),
    };
    const compressionFields = {
      compression: input.compression ?? row.compression,
      compressionLevel: input.compressionLevel === undefined ? (row.compressionLevel ?? null) : input.compressionLevel,
      compressionThreads: input.compressionThreads === undefined ? (row.compressionThreads ?? null) : input.compressionThreads,
    };
    checkCompressionOptions(compressionFields);
    await checkJobReferences(em, refs);
    const archiveFields = {
      archiveFormat: input.archiveFormat ?? row.archiveFormat ?? 'PLAIN',
      fullEveryRuns: input.fullEveryRuns === undefined ? (row.fullEveryRuns ?? null) : input.fullEveryRuns,
      fullEveryDays: input.fullEveryDays === undefined ? (row.fullEveryDays ?? null) : input.fullEveryDays,
    };
    await checkArchiveOptions(em, this.deps.registry(), { ...archiveFields, compression: compressionFields.compression, sourceId: refs.sourceId, encryptionProfileId: refs.encryptionProfileId });
    await checkTestRestore(em, this.deps.registry(), input.testRestore);
    const keepsTestRestore = input.testRestore !== undefined ? Boolean(input.testRestore) : Boolean(row.testRestore);
    await checkTestRestoreEncryption(em, { encryptionProfileId: refs.encryptionProfileId, hasTestRestore: keepsTestRestore });
    const testRestore = input.testRestore !== undefined ? input.testRestore : parseJsonColumn<TestRestoreConfig | null>(row.testRestore ?? null, null);
    if (keepsTestRestore && testRestore && (input.testRestore || (input.sourceId !== undefined && input.sourceId !== row.sourceId))) await assertTestRestoreSupported(this.deps, em, refs.sourceId, testRestore);
    if (input.destinations) await checkDestinations(em, this.deps.registry(), input.destinations);
    const schedule =
      input.schedule !== undefined || input.schedulePresetId !== undefined
        ? await this.scheduleOf(em, input.schedule ?? row.schedule, refs.schedulePresetId ?? null)
        : row.schedule;
    if (input.name !== undefined && input.name !== row.name) await this.assertNameFree(em, input.name, id);
    // A point-in-time source is checked when the job moves to it or is switched on (its stream starts then); other
    // edits, disabling first of all, stay possible while the server is broken or unreachable.
    const sourceChanges = input.sourceId !== undefined && input.sourceId !== row.sourceId;
    const switchedOn = input.enabled === true && !row.enabled;
    if (sourceChanges || switchedOn) await assertJobSourceReady(this.deps, em, refs.sourceId);
    await withUniqueName('A job', input.name ?? row.name, () =>
      em.transactional(async (tx) => {
        const target = await tx.findOneOrFail(JobEntity, { id });
        tx.assign(target, {
          ...refs,
          name: input.name ?? row.name,
          schedule,
          enabled: input.enabled ?? row.enabled,
          databases: input.databases ? JSON.stringify(input.databases) : row.databases,
          ...compressionFields,
          ...archiveFields,
          pgCompression: input.pgCompression ?? row.pgCompression,
          notificationEvents: input.notificationEvents ?? row.notificationEvents,
          skipVerification: input.skipVerification ?? row.skipVerification,
          testRestore: input.testRestore === undefined ? (row.testRestore ?? null) : input.testRestore ? JSON.stringify(input.testRestore) : null,
          updatedAt: new Date(),
        });
        if (input.destinations) {
          await tx.nativeDelete(JobDestinationEntity, { jobId: id });
          this.addDestinations(tx, id, input.destinations);
        }
      }),
    );
    await this.deps.audit.record(actor, 'UPDATE', 'job', id, { fields: Object.keys(input) });
    return this.get(id);
  }

  async delete(id: string, actor: Actor): Promise<void> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    await em.transactional(async (tx) => {
      await tx.nativeDelete(JobDestinationEntity, { jobId: id });
      await tx.nativeDelete(JobEntity, { id });
    });
    await this.deps.audit.record(actor, 'DELETE', 'job', id, { name: row.name });
  }

  /** Copies a job and its destinations under a new name; the copy starts disabled so it does not double-run. */
  async clone(id: string, name: string | undefined, actor: Actor): Promise<JobView> {
    const source = await this.get(id);
    const em = this.deps.em();
    let cloneName = name ?? `${source.name} (copy)`;
    for (let attempt = 2; !name && (await em.findOne(JobEntity, { name: cloneName })); attempt++) {
      cloneName = `${source.name} (copy ${attempt})`;
    }
    const copy = await this.create(
      {
        ...source,
        name: cloneName,
        enabled: false,
        destinations: source.destinations.map(({ configId, priority, retention, retentionPolicyId, transfer }) => ({
          configId,
          priority,
          retention,
          retentionPolicyId,
          transfer,
        })),
      },
      actor,
      { clonedFrom: id },
    );
    return copy;
  }

  private addDestinations(em: EntityManager, jobId: string, destinations: readonly DestinationInput[]): void {
    for (const destination of destinations) {
      em.create(JobDestinationEntity, {
        id: newId(),
        jobId,
        configId: destination.configId,
        priority: destination.priority,
        retention: JSON.stringify(destination.retention ?? {}),
        retentionPolicyId: destination.retentionPolicyId ?? null,
        transfer: destination.transfer ?? 'relay',
      });
    }
  }

  /** The schedule to store: the given cron (validated), else the preset's. */
  private async scheduleOf(em: EntityManager, schedule: string | undefined, presetId: string | null): Promise<string> {
    if (schedule !== undefined) {
      assertCron(schedule, 'body.schedule');
      return schedule.trim().split(/\s+/).join(' ');
    }
    const preset = presetId ? await em.findOne(SchedulePresetEntity, { id: presetId }) : null;
    if (!preset) {
      throw new ValidationError('Invalid request: body.schedule: required unless schedulePresetId is set', [
        { path: 'body.schedule', message: 'required unless schedulePresetId is set' },
      ]);
    }
    return preset.schedule;
  }

  private async assertNameFree(em: EntityManager, name: string, exceptId?: string): Promise<void> {
    const existing = await em.findOne(JobEntity, { name });
    if (existing && existing.id !== exceptId) throw new ConflictError(`A job named "${name}" already exists`);
  }
}
