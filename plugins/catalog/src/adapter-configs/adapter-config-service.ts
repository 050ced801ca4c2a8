import { ConflictError, NotFoundError, TOKENS, UNCHECKED_ADAPTER_HEALTH, ValidationError, type AdapterHealth, type AdapterHealthState, type AnyAdapterDefinition, type ResolvedAdapterConfig } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { SecretBox } from '../crypto/secret-box.js';
import { credentialsByRole, findCredential } from '../credentials/credential-store.js';
import { credentialUpdater } from '../credentials/credential-refresh.js';
import { AdapterConfigEntity, type AdapterConfigRow } from '../entities/adapter-config.js';
import { RetentionPolicyEntity } from '../entities/templates.js';
import { inUse, withUniqueName } from '../shared/conflicts.js';
import { iso, newId, parseJsonColumn, type Actor, type CatalogDeps } from '../shared/deps.js';
import { jobsUsingAdapterConfig, templatesBindingChannel } from '../shared/references.js';
import type { AdapterConfigView, CreateAdapterInput, UpdateAdapterInput } from './adapter-schemas.js';
import { mergeSecrets, openConfig, publicConfig, sealConfig, validateConfig, type StoredConfig } from './adapter-secrets.js';
import { definitionFor, kindOfType, secretFields, type AdapterConfigType } from './adapter-types.js';
import { hasUrlCredentials, mergeStoredSecrets, redactUrl } from './secret-targets.js';
import { checkLocalPaths } from './local-path-check.js';
import { checkRemoteConfig } from './remote-config-check.js';
import { assertPointInTimeSwitchReady } from './point-in-time-switch.js';
import { checkAgentBinding } from './agent-binding.js';
import { refusePointInTimeOnAgent } from './agent-point-in-time.js';

/**
 * CRUD of adapter configs with secret sealing, secret keeping on update and reference rules. The health fields of
 * the views (`lastHealthCheck`, `lastStatus`, `lastError`, `consecutiveFailures`) are observability's: read from and
 * connection tests recorded through `TOKENS.AdapterHealth`; without that plugin every configuration reads unchecked.
 */
export class AdapterConfigService {
  constructor(private readonly deps: CatalogDeps) {}

  private healthPort(): AdapterHealth | undefined {
    return this.deps.container.isRegistered(TOKENS.AdapterHealth, true) ? this.deps.container.resolve(TOKENS.AdapterHealth) : undefined;
  }

  /** The health state of each given configuration (unchecked when it has none). */
  async healthOf(ids: readonly string[]): Promise<Map<string, AdapterHealthState>> {
    const port = this.healthPort();
    return ids.length === 0 || !port ? new Map() : port.statesOf(ids);
  }

  /** The view of one row with its health state. */
  async viewOf(row: AdapterConfigRow): Promise<AdapterConfigView> {
    return this.view(row, (await this.healthOf([row.id])).get(row.id));
  }

  /** Secret fields of a stored row: the definition's, plus any value that is sealed (adapter since uninstalled). */
  secretsOf(row: Pick<AdapterConfigRow, 'type' | 'adapterId' | 'config'>): string[] {
    const found = this.deps.registry().get(kindOfType(row.type as AdapterConfigType), row.adapterId);
    const stored = parseJsonColumn<StoredConfig>(row.config, {});
    const sealed = Object.keys(stored).filter((key) => SecretBox.isSealed(stored[key]));
    return [...new Set([...(found ? secretFields(found.definition) : []), ...sealed])];
  }

  view(row: AdapterConfigRow, health: AdapterHealthState = UNCHECKED_ADAPTER_HEALTH): AdapterConfigView {
    const stored = parseJsonColumn<StoredConfig>(row.config, {});
    const shownRedacted = this.credentialUrlsOf(row, stored);
    const { config, secretStatus } = publicConfig(stored, this.secretsOf(row).filter((field) => !(field in shownRedacted)));
    Object.assign(config, shownRedacted);
    return {
      id: row.id,
      name: row.name,
      type: row.type as AdapterConfigType,
      adapterId: row.adapterId,
      config,
      secretStatus,
      metadata: parseJsonColumn<Record<string, unknown> | null>(row.metadata, null),
      primaryCredentialId: row.primaryCredentialId ?? null,
      sshCredentialId: row.sshCredentialId ?? null,
      defaultRetentionPolicyId: row.defaultRetentionPolicyId ?? null,
      excludeFromRestore: Boolean(row.excludeFromRestore),
      agentId: row.agentId ?? null,
      lastHealthCheck: iso(health.lastHealthCheck),
      lastStatus: health.lastStatus,
      lastError: health.lastError,
      consecutiveFailures: health.consecutiveFailures,
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    };
  }

  /** URLs stored sealed because they carry credentials, redacted for display (the catalog seals them, see sealConfig). */
  private credentialUrlsOf(row: AdapterConfigRow, stored: StoredConfig): Record<string, string> {
    const found = this.deps.registry().get(kindOfType(row.type as AdapterConfigType), row.adapterId);
    const declared = new Set(found ? secretFields(found.definition) : []);
    const shown: Record<string, string> = {};
    for (const field of Object.keys(stored).filter((key) => !declared.has(key) && SecretBox.isSealed(stored[key]))) {
      try {
        const plain = this.deps.box().openJson(stored[field] as string);
        if (hasUrlCredentials(plain)) shown[field] = redactUrl(plain as string);
      } catch {
        // Not openable with this key: it stays a secret field in the view.
      }
    }
    return shown;
  }

  async list(types: readonly AdapterConfigType[]): Promise<AdapterConfigView[]> {
    if (types.length === 0) return [];
    const rows = await this.deps.em().find(AdapterConfigEntity, { type: { $in: [...types] } }, { orderBy: { name: 'asc' } });
    const health = await this.healthOf(rows.map((row) => row.id));
    return rows.map((row) => this.view(row, health.get(row.id)));
  }

  async find(id: string, em = this.deps.em()): Promise<AdapterConfigRow> {
    const row = await em.findOne(AdapterConfigEntity, { id });
    if (!row) throw new NotFoundError('Adapter configuration not found');
    return row;
  }

  /** The decrypted plaintext config of a stored row. */
  plainConfig(row: AdapterConfigRow): Record<string, unknown> {
    return openConfig(this.deps.box(), parseJsonColumn<StoredConfig>(row.config, {}), this.secretsOf(row));
  }

  async create(input: CreateAdapterInput, actor: Actor): Promise<AdapterConfigView> {
    const definition = definitionFor(this.deps.registry(), input.type, input.adapterId);
    const em = this.deps.em();
    await this.checkReferences(em, definition, input);
    const config = validateConfig(definition, mergeSecrets(input.config, null, secretFields(definition)));
    // The paths of a source on an agent are the agent host's: the server's local path rule does not apply to them.
    if (!input.agentId) await checkLocalPaths(this.deps.container, definition, config);
    await refusePointInTimeOnAgent(this.deps, em, { name: input.name, definition, config, refs: input });
    await checkRemoteConfig(this.deps, definition, config, input);
    await this.assertNameFree(em, input.type, input.name);
    const now = new Date();
    const row = em.create(AdapterConfigEntity, {
      id: newId(),
      name: input.name,
      type: input.type,
      adapterId: input.adapterId,
      config: JSON.stringify(sealConfig(this.deps.box(), config, secretFields(definition))),
      metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      primaryCredentialId: input.primaryCredentialId ?? null,
      sshCredentialId: input.sshCredentialId ?? null,
      defaultRetentionPolicyId: input.defaultRetentionPolicyId ?? null,
      excludeFromRestore: input.excludeFromRestore ?? false,
      agentId: input.agentId ?? null,
      createdAt: now,
      updatedAt: now,
    });
    await withUniqueName('An adapter configuration', input.name, () => em.flush());
    await this.deps.audit.record(actor, 'CREATE', 'adapter', row.id, { type: row.type, adapterId: row.adapterId, name: row.name });
    return this.view(row);
  }

  /** The plaintext config an update would store (validated, stored secrets kept), without storing anything. */
  configAfterUpdate(row: AdapterConfigRow, input: UpdateAdapterInput): Record<string, unknown> {
    const definition = definitionFor(this.deps.registry(), row.type as AdapterConfigType, row.adapterId);
    const storedPlain = this.plainConfig(row);
    return validateConfig(definition, mergeStoredSecrets(definition, input.config ?? storedPlain, storedPlain, secretFields(definition)));
  }

  async update(id: string, input: UpdateAdapterInput, actor: Actor): Promise<AdapterConfigView> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const type = row.type as AdapterConfigType;
    if ((input.type && input.type !== type) || (input.adapterId && input.adapterId !== row.adapterId)) {
      throw new ValidationError('Invalid request: type and adapterId of a saved configuration cannot change', [
        { path: 'body.type', message: 'cannot change' },
      ]);
    }
    const definition = definitionFor(this.deps.registry(), type, row.adapterId);
    const merged = {
      primaryCredentialId: input.primaryCredentialId === undefined ? row.primaryCredentialId : input.primaryCredentialId,
      sshCredentialId: input.sshCredentialId === undefined ? row.sshCredentialId : input.sshCredentialId,
      defaultRetentionPolicyId:
        input.defaultRetentionPolicyId === undefined ? row.defaultRetentionPolicyId : input.defaultRetentionPolicyId,
      excludeFromRestore: input.excludeFromRestore ?? row.excludeFromRestore,
      agentId: input.agentId === undefined ? row.agentId : input.agentId,
      type,
    };
    await this.checkReferences(em, definition, merged);
    const storedPlain = this.plainConfig(row);
    const submitted = input.config ?? Object.fromEntries(Object.entries(storedPlain));
    const config = validateConfig(definition, mergeStoredSecrets(definition, submitted, storedPlain, secretFields(definition)));
    if (!merged.agentId) await checkLocalPaths(this.deps.container, definition, config);
    await refusePointInTimeOnAgent(this.deps, em, { name: input.name ?? row.name, definition, config, refs: merged });
    await checkRemoteConfig(this.deps, definition, config, merged);
    if (input.name !== undefined && input.name !== row.name) await this.assertNameFree(em, type, input.name, id);
    // Last, as it may wait for the server: a source its jobs use, switched into a point-in-time mode, must serve them.
    const name = input.name ?? row.name;
    await assertPointInTimeSwitchReady(this.deps, em, { id, name, definition, before: { config: storedPlain, refs: row }, after: { config, refs: merged } });
    const changed = [
      ...Object.keys(input).filter((key) => key !== 'config'),
      ...(input.config ? [`config(${Object.keys(input.config).join(',')})`] : []),
    ];
    em.assign(row, {
      name: input.name ?? row.name,
      config: JSON.stringify(sealConfig(this.deps.box(), config, secretFields(definition))),
      metadata: input.metadata === undefined ? row.metadata : input.metadata ? JSON.stringify(input.metadata) : null,
      primaryCredentialId: merged.primaryCredentialId ?? null,
      sshCredentialId: merged.sshCredentialId ?? null,
      defaultRetentionPolicyId: merged.defaultRetentionPolicyId ?? null,
      excludeFromRestore: merged.excludeFromRestore,
      agentId: merged.agentId ?? null,
      updatedAt: new Date(),
    });
    await withUniqueName('An adapter configuration', row.name, () => em.flush());
    await this.deps.audit.record(actor, 'UPDATE', 'adapter', row.id, { type, fields: changed });
    return this.viewOf(row);
  }

  async delete(id: string, actor: Actor): Promise<void> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const jobs = await jobsUsingAdapterConfig(em, id);
    const templates = row.type === 'notification' ? await templatesBindingChannel(em, id) : [];
    if (jobs.length > 0 || templates.length > 0) {
      throw inUse(`Adapter configuration "${row.name}"`, jobs, { notificationTemplates: templates });
    }
    await em.removeAndFlush(row);
    await this.deps.audit.record(actor, 'DELETE', 'adapter', id, { type: row.type, adapterId: row.adapterId, name: row.name });
  }

  /** The config resolved for use: secrets decrypted and credential payloads attached. */
  async resolve(id: string): Promise<ResolvedAdapterConfig> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    return {
      configId: row.id,
      name: row.name,
      kind: kindOfType(row.type as AdapterConfigType),
      adapterId: row.adapterId,
      config: this.plainConfig(row),
      credentials: await credentialsByRole(em, this.deps.box(), row),
      updateCredentials: credentialUpdater(() => this.deps.em(), () => this.deps.box(), row),
      excludeFromRestore: Boolean(row.excludeFromRestore),
      agentId: row.agentId ?? null,
    };
  }

  /** Stores the outcome of a connection test (observability's `TOKENS.AdapterHealth`; nothing without it). */
  async recordHealth(id: string, ok: boolean, message: string): Promise<void> {
    await this.healthPort()?.recordConnectionTest(id, ok, message);
  }

  private async assertNameFree(em: EntityManager, type: string, name: string, exceptId?: string): Promise<void> {
    const existing = await em.findOne(AdapterConfigEntity, { type, name });
    if (existing && existing.id !== exceptId) {
      throw new ConflictError(`An adapter configuration named "${name}" already exists`);
    }
  }

  /** Credential and retention references must exist; adapters that declare credentials need a matching profile. */
  private async checkReferences(
    em: EntityManager,
    definition: AnyAdapterDefinition,
    refs: {
      type: AdapterConfigType;
      primaryCredentialId?: string | null;
      sshCredentialId?: string | null;
      defaultRetentionPolicyId?: string | null;
      excludeFromRestore?: boolean;
      agentId?: string | null;
    },
  ): Promise<void> {
    await checkAgentBinding(this.deps.container, refs.type, refs.agentId);
    if (refs.excludeFromRestore && refs.type !== 'database') {
      throw new ValidationError('Invalid request: excludeFromRestore: only database sources can be excluded from restore', [
        { path: 'body.excludeFromRestore', message: 'only database sources can be excluded from restore' },
      ]);
    }
    const required = definition.requiredCredentials ?? [];
    const primary = refs.primaryCredentialId ? await findCredential(em, refs.primaryCredentialId) : null;
    if (refs.sshCredentialId) await findCredential(em, refs.sshCredentialId, 'SSH credential profile');
    if (required.length > 0 && (!primary || !required.includes(primary.type))) {
      const message = `${definition.kind}-${definition.id} requires a credential profile of type ${required.join(' or ')}`;
      throw new ValidationError(`Invalid request: primaryCredentialId: ${message}`, [{ path: 'body.primaryCredentialId', message }]);
    }
    if (refs.defaultRetentionPolicyId && !(await em.findOne(RetentionPolicyEntity, { id: refs.defaultRetentionPolicyId }))) {
      throw new NotFoundError(`Retention policy ${refs.defaultRetentionPolicyId} not found`);
    }
  }
}
