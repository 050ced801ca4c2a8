import { ConflictError, ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { Catalog } from '../catalog.js';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { JobEntity } from '../entities/jobs.js';
import { CredentialProfileEntity, EncryptionProfileEntity } from '../entities/profiles.js';
import {
  NamingTemplateEntity,
  NotificationTemplateEntity,
  RetentionPolicyEntity,
  SchedulePresetEntity,
} from '../entities/templates.js';
import { newId, type Actor } from '../shared/deps.js';
import { settingsPatchBody, type SettingsValues } from '../settings/setting-definitions.js';
import { exportDocumentSchema, openExportSecrets, parseImportKey, type ExportSecrets } from './export-format.js';
import { IMPORT_ORDER, importRecordSchemas, type ImportInput, type ImportKind, type ImportRecords, type ImportResult } from './import-records.js';
import { writeRecord, type IdMaps } from './import-writers.js';
import { systemTaskSchedules } from './system-task-schedules.js';

const ENTITIES = {
  credentials: CredentialProfileEntity,
  encryptionProfiles: EncryptionProfileEntity,
  retentionPolicies: RetentionPolicyEntity,
  namingTemplates: NamingTemplateEntity,
  schedulePresets: SchedulePresetEntity,
  adapters: AdapterConfigEntity,
  notificationTemplates: NotificationTemplateEntity,
  jobs: JobEntity,
} as const;

function invalid(message: string, path = 'body.document'): ValidationError {
  return new ValidationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}

/** Parses the document and every record; a malformed export is a 400 naming the record. */
function parseDocument(input: ImportInput) {
  const parsed = exportDocumentSchema.safeParse(input.document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'not an export document'}`);
  }
  const records = {} as ImportRecords;
  for (const kind of IMPORT_ORDER) {
    records[kind] = parsed.data.records[kind].map((raw, index) => {
      const result = importRecordSchemas[kind].safeParse(raw);
      if (!result.success) {
        const issue = result.error.issues[0];
        throw invalid(`${issue?.path.join('.') || '(root)'}: ${issue?.message}`, `body.document.records.${kind}[${index}]`);
      }
      return result.data;
    }) as never;
  }
  return { document: parsed.data, records };
}

async function secretsOf(catalog: Catalog, input: ImportInput, document: ReturnType<typeof parseDocument>['document']): Promise<ExportSecrets | null> {
  if (document.secrets !== 'encrypted') return null;
  let key: Buffer;
  if (input.key) key = parseImportKey(input.key);
  else if (input.encryptionProfileId) key = catalog.vault.key(await catalog.vault.find(input.encryptionProfileId));
  else throw invalid('this export is encrypted: send "key" (the profile key or its recovery-kit key file) or "encryptionProfileId"', 'body.key');
  return openExportSecrets(key, document);
}

/**
 * Imports an export document. Records are matched by name (adapter configs by type and name); system records
 * match their seeded twin silently. In `strict` mode any other name conflict is a 409 listing them all; in `merge`
 * mode the existing record is kept and references point to it. Everything is written in one transaction; a dry
 * run stops after the plan.
 */
export async function importCatalog(catalog: Catalog, input: ImportInput, actor: Actor): Promise<ImportResult> {
  const { document, records } = parseDocument(input);
  const secrets = await secretsOf(catalog, input, document);
  const em = catalog.deps.em();
  const ids = Object.fromEntries(IMPORT_ORDER.map((kind) => [kind, new Map<string, string>()])) as IdMaps;
  const toCreate = Object.fromEntries(IMPORT_ORDER.map((kind) => [kind, [] as unknown[]])) as { [K in ImportKind]: ImportRecords[K] };
  const result: ImportResult = { dryRun: input.dryRun, mode: input.mode, created: {}, merged: {}, conflicts: [], warnings: [] };

  for (const kind of IMPORT_ORDER) {
    for (const record of records[kind] as Array<{ id: string; name: string; type?: string; isSystem?: boolean }>) {
      const where = kind === 'adapters' ? { name: record.name, type: record.type } : { name: record.name };
      const existing = (await em.findOne(ENTITIES[kind] as never, where as never)) as { id: string; isSystem?: boolean } | null;
      if (existing && !(record.isSystem && existing.isSystem)) result.conflicts.push({ kind, name: record.name });
      if (existing) {
        ids[kind].set(record.id, existing.id);
        result.merged[kind] = (result.merged[kind] ?? 0) + 1;
        continue;
      }
      // A public-key profile (issue 45) has nothing secret: it comes across even from an export without secrets.
      if (kind === 'encryptionProfiles' && !(record as { publicKey?: string }).publicKey && !secrets?.encryptionProfiles[record.id]) {
        result.warnings.push(`Encryption profile "${record.name}" skipped: the export carries no secrets`);
        continue;
      }
      const isIdTaken = Boolean(await em.findOne(ENTITIES[kind] as never, { id: record.id } as never));
      ids[kind].set(record.id, isIdTaken ? newId() : record.id);
      (toCreate[kind] as unknown[]).push(record);
      result.created[kind] = (result.created[kind] ?? 0) + 1;
    }
  }
  if (result.conflicts.length > 0 && input.mode !== 'merge') {
    const names = result.conflicts.map((c) => `${c.kind} "${c.name}"`).join(', ');
    throw new ConflictError(`The import conflicts with existing records: ${names}. Send mode "merge" to keep the existing ones.`, {
      conflicts: result.conflicts,
    });
  }
  if (!secrets) result.warnings.push('The export carries no secrets: imported adapters and credentials have no secret values');
  const jobsToCreate = toCreate.jobs.filter((job) => {
    const missingProfile = job.encryptionProfileId && !ids.encryptionProfiles.has(job.encryptionProfileId);
    if (missingProfile) {
      result.warnings.push(`Job "${job.name}" skipped: its encryption profile was not imported`);
      ids.jobs.delete(job.id);
      result.created.jobs = (result.created.jobs ?? 1) - 1;
    }
    return !missingProfile;
  });
  toCreate.jobs = jobsToCreate;
  if (input.dryRun) return result;

  await em.transactional(async (tx: EntityManager) => {
    for (const kind of IMPORT_ORDER) {
      for (const record of toCreate[kind]) await writeRecord(catalog, tx, kind, record as never, ids, secrets);
    }
  });
  await applySettings(catalog, document.records.settings, document.records.systemTasks, ids, actor, result);
  await catalog.deps.audit.record(actor, 'IMPORT', 'config', null, { created: result.created, merged: result.merged, mode: input.mode });
  return result;
}

/** Settings and task schedules of the export, channel ids remapped; invalid values become warnings. */
async function applySettings(
  catalog: Catalog,
  settings: Record<string, unknown>,
  tasks: unknown[],
  ids: IdMaps,
  actor: Actor,
  result: ImportResult,
): Promise<void> {
  const patch = settingsPatchBody.safeParse(settings);
  if (!patch.success) {
    result.warnings.push('Settings skipped: they do not pass validation on this installation');
  } else {
    const values = patch.data as Partial<SettingsValues>;
    const config = values['notifications.config'];
    if (config) {
      const map = (id: string) => ids.adapters.get(id) ?? id;
      values['notifications.config'] = {
        globalChannels: config.globalChannels.map(map),
        events: Object.fromEntries(
          Object.entries(config.events).map(([event, rule]) => [event, { ...rule, channels: rule.channels?.map(map) ?? null }]),
        ),
      };
    }
    await catalog.settings.update(values, actor);
  }
  const parsed = tasks.flatMap((raw) => {
    const task = importRecordSchemas.systemTasks.safeParse(raw);
    return task.success ? [task.data] : [];
  });
  if (parsed.length === 0) return;
  const schedules = systemTaskSchedules(catalog);
  if (schedules) await schedules.restore(parsed);
  else result.warnings.push('System task schedules skipped: this installation runs no system tasks (observability plugin)');
}
