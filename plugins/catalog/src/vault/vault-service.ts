import { randomBytes } from 'node:crypto';
import { AgeKeyError, ConflictError, encryptionKeyFingerprint, NotFoundError, parseAgeRecipient, ValidationError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import { EncryptionProfileEntity, type EncryptionProfileRow } from '../entities/profiles.js';
import { inUse, withUniqueName } from '../shared/conflicts.js';
import { iso, newId, type Actor, type CatalogDeps } from '../shared/deps.js';
import { jobsWhere } from '../shared/references.js';
import type { CreateVaultInput, UpdateVaultInput, VaultProfileView } from './vault-schemas.js';

/** Parses an imported profile key; the 400 never quotes the text. */
export function parseProfileKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || /^[A-Za-z0-9_-]+$/.test(trimmed)) {
    const decoded = Buffer.from(trimmed, /[-_]/.test(trimmed) ? 'base64url' : 'base64');
    if (decoded.length === 32) return decoded;
  }
  throw new ValidationError('Invalid request: body.key: must be a 32-byte key as 64 hex characters or base64', [
    { path: 'body.key', message: 'must be a 32-byte key as 64 hex characters or base64' },
  ]);
}

/** Parses the `publicKey` of a new public-key profile; the 400 names the field and what is expected. */
export function parseProfilePublicKey(text: string): string {
  try {
    return parseAgeRecipient(text).text;
  } catch (error) {
    if (!(error instanceof AgeKeyError)) throw error;
    throw new ValidationError(`Invalid request: body.publicKey: ${error.message}`, [{ path: 'body.publicKey', message: error.message }]);
  }
}

/** A public-key profile has no key on the server: what asks for one gets this 400 instead. */
export function noKeyOnServer(name: string): ValidationError {
  return new ValidationError(
    `Encryption profile "${name}" holds only a public key: Holdfast has no key that opens its backups. Send the private key with the request (privateKey) or decrypt them with age (age -d -i key.txt)`,
  );
}

/** Identifies a profile key without revealing it: the same fingerprint encrypted backups and sidecars carry. */
export function profileKeyFingerprint(key: Buffer): string {
  return encryptionKeyFingerprint(key);
}

/** Encryption profiles: the key is sealed with the system key and only leaves inside a recovery kit. */
export class VaultService {
  constructor(private readonly deps: CatalogDeps) {}

  view(row: EncryptionProfileRow): VaultProfileView {
    return {
      id: row.id,
      name: row.name,
      description: row.description ?? null,
      kind: row.publicKey ? 'public-key' : 'symmetric',
      publicKey: row.publicKey ?? null,
      keyFingerprint: profileKeyFingerprint(row.publicKey ? parseAgeRecipient(row.publicKey).publicKey : this.key(row)),
      createdAt: iso(row.createdAt)!,
      updatedAt: iso(row.updatedAt)!,
    };
  }

  /** The 32-byte profile key of a row; a 400 for a public-key profile (the server holds no key for it). */
  key(row: EncryptionProfileRow): Buffer {
    if (row.publicKey) throw noKeyOnServer(row.name);
    return Buffer.from(this.deps.box().open(row.secretKey), 'hex');
  }

  async list(visible: 'all' | string[]): Promise<VaultProfileView[]> {
    const where = visible === 'all' ? {} : { id: { $in: visible } };
    const rows = await this.deps.em().find(EncryptionProfileEntity, where, { orderBy: { name: 'asc' } });
    return rows.map((row) => this.view(row));
  }

  async find(id: string, em: EntityManager = this.deps.em()): Promise<EncryptionProfileRow> {
    const row = await em.findOne(EncryptionProfileEntity, { id });
    if (!row) throw new NotFoundError('Encryption profile not found');
    return row;
  }

  async create(input: CreateVaultInput, actor: Actor): Promise<VaultProfileView> {
    const publicKey = input.publicKey ? parseProfilePublicKey(input.publicKey) : null;
    // A public-key profile seals an empty string: rotation and exports handle every row alike, and no key exists.
    const key = publicKey ? Buffer.alloc(0) : input.key ? parseProfileKey(input.key) : randomBytes(32);
    const em = this.deps.em();
    await this.assertNameFree(em, input.name);
    const now = new Date();
    const row = em.create(EncryptionProfileEntity, {
      id: newId(),
      name: input.name,
      description: input.description ?? null,
      secretKey: this.deps.box().seal(key.toString('hex')),
      publicKey,
      createdAt: now,
      updatedAt: now,
    });
    await withUniqueName('An encryption profile', input.name, () => em.flush());
    await this.deps.audit.record(actor, 'CREATE', 'vault', row.id, { name: row.name, imported: Boolean(input.key), ...(publicKey ? { publicKey } : {}) });
    return this.view(row);
  }

  async update(id: string, input: UpdateVaultInput, actor: Actor): Promise<VaultProfileView> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    if (input.name !== undefined && input.name !== row.name) await this.assertNameFree(em, input.name, id);
    em.assign(row, {
      name: input.name ?? row.name,
      description: input.description === undefined ? row.description : input.description,
      updatedAt: new Date(),
    });
    await withUniqueName('An encryption profile', row.name, () => em.flush());
    await this.deps.audit.record(actor, 'UPDATE', 'vault', id, { fields: Object.keys(input) });
    return this.view(row);
  }

  /**
   * Refused (409) while jobs use the profile. Backups already written with it are not known here: the engine
   * checks its execution records before it lets a profile go (see docs/api/catalog.md).
   */
  async delete(id: string, actor: Actor): Promise<void> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const jobs = await jobsWhere(em, 'encryptionProfileId', id);
    if (jobs.length > 0) throw inUse(`Encryption profile "${row.name}"`, jobs);
    await em.removeAndFlush(row);
    await this.deps.audit.record(actor, 'DELETE', 'vault', id, { name: row.name });
  }

  private async assertNameFree(em: EntityManager, name: string, exceptId?: string): Promise<void> {
    const existing = await em.findOne(EncryptionProfileEntity, { name });
    if (existing && existing.id !== exceptId) throw new ConflictError(`An encryption profile named "${name}" already exists`);
  }
}
