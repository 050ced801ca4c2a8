import { ConflictError, ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { mergeSecrets, publicConfig } from '../adapter-configs/adapter-secrets.js';
import { CredentialProfileEntity, type CredentialProfileRow } from '../entities/profiles.js';
import { inUse, withUniqueName } from '../shared/conflicts.js';
import { iso, newId, type Actor, type CatalogDeps } from '../shared/deps.js';
import { usersOfCredential } from '../shared/references.js';
import type { CreateCredentialInput, CredentialView, GenerateSshKeyInput, UpdateCredentialInput } from './credential-schemas.js';
import { findCredential, openCredentialPayload } from './credential-store.js';
import { CREDENTIAL_PAYLOADS, credentialSecretFields, type CredentialType } from './credential-types.js';
import { generateSshKey } from './ssh-keygen.js';

/** Validates a payload with its type's schema; the 400 names fields and never echoes values. */
function validatePayload(type: CredentialType, data: Record<string, unknown>): Record<string, unknown> {
  const parsed = CREDENTIAL_PAYLOADS[type].safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: ['body', 'data', ...issue.path.map(String)].join('.'),
      message: issue.message.replace(/^Invalid input: /, ''),
    }));
    throw new ValidationError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  return parsed.data as Record<string, unknown>;
}

/** CRUD of credential profiles; the payload is sealed as a whole with the system key. */
export class CredentialService {
  constructor(private readonly deps: CatalogDeps) {}

  view(row: CredentialProfileRow): CredentialView {
    const type = row.type as CredentialType;
    const { config, secretStatus } = publicConfig(openCredentialPayload(this.deps.box(), row), credentialSecretFields(type));
    return {
      id: row.id,
      name: row.name,
      description: row.description ?? null,
      type,
      data: config,
      secretStatus,
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    };
  }

  async list(visible: 'all' | string[]): Promise<CredentialView[]> {
    const where = visible === 'all' ? {} : { id: { $in: visible } };
    const rows = await this.deps.em().find(CredentialProfileEntity, where, { orderBy: { name: 'asc' } });
    return rows.map((row) => this.view(row));
  }

  find(id: string, em: EntityManager = this.deps.em()): Promise<CredentialProfileRow> {
    return findCredential(em, id);
  }

  async create(input: CreateCredentialInput, actor: Actor, audit = true): Promise<CredentialView> {
    const data = validatePayload(input.type, mergeSecrets(input.data, null, credentialSecretFields(input.type)));
    const em = this.deps.em();
    await this.assertNameFree(em, input.name);
    const now = new Date();
    const row = em.create(CredentialProfileEntity, {
      id: newId(),
      name: input.name,
      description: input.description ?? null,
      type: input.type,
      data: this.deps.box().sealJson(data),
      createdAt: now,
      updatedAt: now,
    });
    await withUniqueName('A credential profile', input.name, () => em.flush());
    if (audit) await this.deps.audit.record(actor, 'CREATE', 'credential', row.id, { type: row.type, name: row.name });
    return this.view(row);
  }

  async generateSsh(input: GenerateSshKeyInput, actor: Actor): Promise<CredentialView & { publicKey: string }> {
    const key = await generateSshKey(input.algorithm, input.passphrase, input.name);
    const view = await this.create(
      {
        name: input.name,
        description: input.description,
        type: 'SSH_KEY',
        data: {
          ...(input.username ? { username: input.username } : {}),
          privateKey: key.privateKey,
          ...(input.passphrase ? { passphrase: input.passphrase } : {}),
          publicKey: key.publicKey,
          algorithm: key.algorithm,
        },
      },
      actor,
      false,
    );
    await this.deps.audit.record(actor, 'CREATE', 'credential', view.id, { type: 'SSH_KEY', name: view.name, generated: key.algorithm });
    return { ...view, publicKey: key.publicKey };
  }

  async update(id: string, input: UpdateCredentialInput, actor: Actor): Promise<CredentialView> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const type = row.type as CredentialType;
    if (input.type && input.type !== type) {
      throw new ValidationError('Invalid request: body.type: the type of a credential profile cannot change', [
        { path: 'body.type', message: 'cannot change' },
      ]);
    }
    const stored = openCredentialPayload(this.deps.box(), row);
    const data = input.data ? validatePayload(type, mergeSecrets(input.data, stored, credentialSecretFields(type))) : stored;
    if (input.name !== undefined && input.name !== row.name) await this.assertNameFree(em, input.name, id);
    em.assign(row, {
      name: input.name ?? row.name,
      description: input.description === undefined ? row.description : input.description,
      data: this.deps.box().sealJson(data),
      updatedAt: new Date(),
    });
    await withUniqueName('A credential profile', row.name, () => em.flush());
    await this.deps.audit.record(actor, 'UPDATE', 'credential', id, { fields: Object.keys(input) });
    return this.view(row);
  }

  async delete(id: string, actor: Actor): Promise<void> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const usage = await usersOfCredential(em, id);
    if (usage.adapters.length > 0) {
      throw inUse(`Credential profile "${row.name}"`, usage.jobs, { adapters: usage.adapters });
    }
    await em.removeAndFlush(row);
    await this.deps.audit.record(actor, 'DELETE', 'credential', id, { type: row.type, name: row.name });
  }

  /** The decrypted payload; audited because it hands a secret to a person. */
  async reveal(id: string, actor: Actor): Promise<{ id: string; type: CredentialType; data: Record<string, unknown> }> {
    const row = await this.find(id);
    const data = openCredentialPayload(this.deps.box(), row);
    await this.deps.audit.record(actor, 'REVEAL', 'credential', id, { type: row.type, fields: Object.keys(data) });
    return { id: row.id, type: row.type as CredentialType, data };
  }

  async usage(id: string) {
    const em = this.deps.em();
    await this.find(id, em);
    return usersOfCredential(em, id);
  }

  private async assertNameFree(em: EntityManager, name: string, exceptId?: string): Promise<void> {
    const existing = await em.findOne(CredentialProfileEntity, { name });
    if (existing && existing.id !== exceptId) throw new ConflictError(`A credential profile named "${name}" already exists`);
  }
}
