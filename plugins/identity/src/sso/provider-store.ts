import { ConflictError, HttpError, NotFoundError, ValidationError, type SecretSealer } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { newId } from '../crypto/tokens.js';
import { AccountEntity } from '../entities/account.js';
import { GroupEntity } from '../entities/group.js';
import { SsoProviderEntity, type SsoProvider } from '../entities/sso-provider.js';
import type { AttributeMapping, GroupMapping, SsoProtocol } from './types.js';

/** Fields an administrator sets on a provider; `clientSecret` empty or absent on update keeps the stored one. */
export interface SsoProviderInput {
  providerId: string;
  type: SsoProtocol;
  name: string;
  enabled?: boolean;
  allowProvisioning?: boolean;
  domain?: string | null;
  issuer?: string | null;
  discoveryEndpoint?: string | null;
  clientId?: string;
  clientSecret?: string;
  scopes?: string | null;
  samlEntryPoint?: string | null;
  samlCertificate?: string | null;
  groupClaim?: string | null;
  groupMappings?: GroupMapping[];
  attributeMapping?: AttributeMapping | null;
}

/** A provider as the API shows it: never the client secret, only whether one is stored. */
export interface SsoProviderView {
  id: string;
  providerId: string;
  type: SsoProtocol;
  name: string;
  enabled: boolean;
  allowProvisioning: boolean;
  domain: string | null;
  issuer: string | null;
  discoveryEndpoint: string | null;
  clientId: string;
  hasClientSecret: boolean;
  scopes: string | null;
  samlEntryPoint: string | null;
  samlCertificate: string | null;
  groupClaim: string | null;
  groupMappings: GroupMapping[];
  attributeMapping: AttributeMapping | null;
  createdAt: string;
  updatedAt: string;
}

/** A provider with its secret opened, for the sign-in flows only. */
export interface ResolvedSsoProvider {
  row: SsoProvider;
  /** Opened client id (OIDC) or SP entity id (SAML); the row holds it sealed. */
  clientId: string;
  clientSecret: string | undefined;
  groupMappings: GroupMapping[];
  attributeMapping: AttributeMapping;
  /** Lower-case email domains allowed to sign in through this provider; empty: any. */
  domains: string[];
}

/** SAML service-provider entity id used when the administrator leaves `clientId` empty. */
export function defaultSamlEntityId(providerId: string): string {
  return `urn:holdfast:sp:${providerId}`;
}

/** `example.com, Example.org` -> `['example.com', 'example.org']`. */
export function parseDomains(domain: string | null | undefined): string[] {
  return (domain ?? '')
    .split(/[,\s]+/)
    .map((part) => part.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean);
}

function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Provider records: CRUD for administrators, sealed client secrets, resolution for the sign-in flows. */
export class SsoProviderStore {
  constructor(
    private readonly em: () => EntityManager,
    private readonly sealer: () => SecretSealer,
  ) {}

  async list(): Promise<SsoProvider[]> {
    return this.em().find(SsoProviderEntity, {}, { orderBy: { name: 'asc', id: 'asc' } });
  }

  /** By record id; 404 otherwise. */
  async get(id: string): Promise<SsoProvider> {
    const row = await this.em().findOne(SsoProviderEntity, { id });
    if (!row) throw new NotFoundError('SSO provider not found');
    return row;
  }

  /** By its public `providerId` (used in sign-in URLs); undefined when unknown. */
  async findByProviderId(providerId: string): Promise<SsoProvider | undefined> {
    return (await this.em().findOne(SsoProviderEntity, { providerId })) ?? undefined;
  }

  async create(input: SsoProviderInput): Promise<SsoProvider> {
    const em = this.em();
    if (await em.count(SsoProviderEntity, { providerId: input.providerId })) {
      throw new ConflictError(`An SSO provider with providerId "${input.providerId}" already exists`);
    }
    await this.assertGroupsExist(em, input.groupMappings ?? []);
    const clientId = input.clientId || (input.type === 'saml' ? defaultSamlEntityId(input.providerId) : '');
    assertComplete(input.type, { ...input, clientId });
    const now = new Date();
    const row = em.create(SsoProviderEntity, {
      id: newId(),
      providerId: input.providerId,
      type: input.type,
      adapterId: input.type,
      name: input.name,
      enabled: input.enabled ?? true,
      allowProvisioning: input.allowProvisioning ?? true,
      domain: input.domain ?? null,
      domainVerified: false,
      issuer: input.issuer ?? null,
      discoveryEndpoint: input.discoveryEndpoint ?? null,
      samlEntryPoint: input.samlEntryPoint ?? null,
      samlCertificate: input.samlCertificate ?? null,
      // SPEC "Other records": client id and secret are both stored encrypted.
      clientId: this.sealer().seal(clientId),
      clientSecret: input.clientSecret ? this.sealer().seal(input.clientSecret) : '',
      scopes: input.scopes ?? null,
      groupClaim: input.groupClaim ?? null,
      groupMappings: JSON.stringify(input.groupMappings ?? []),
      attributeMapping: input.attributeMapping ? JSON.stringify(input.attributeMapping) : null,
      createdAt: now,
      updatedAt: now,
    });
    await em.flush();
    return row;
  }

  /** Applies changes; the type and providerId are fixed once created (sign-in URLs and linked accounts name them). */
  async update(id: string, changes: Partial<Omit<SsoProviderInput, 'providerId' | 'type'>>): Promise<SsoProvider> {
    const em = this.em();
    const row = await em.findOne(SsoProviderEntity, { id });
    if (!row) throw new NotFoundError('SSO provider not found');
    if (changes.groupMappings) await this.assertGroupsExist(em, changes.groupMappings);
    const { clientSecret, groupMappings, attributeMapping, clientId, ...plain } = changes;
    for (const [key, value] of Object.entries(plain)) {
      if (value !== undefined) (row as Record<string, unknown>)[key] = value;
    }
    let plainClientId = this.sealer().open(row.clientId);
    if (clientId !== undefined) {
      plainClientId = clientId || (row.type === 'saml' ? defaultSamlEntityId(row.providerId) : '');
      row.clientId = this.sealer().seal(plainClientId);
    }
    // An empty secret on update means "unchanged": the form never receives the stored one to send back.
    if (clientSecret) row.clientSecret = this.sealer().seal(clientSecret);
    if (groupMappings !== undefined) row.groupMappings = JSON.stringify(groupMappings);
    if (attributeMapping !== undefined) row.attributeMapping = attributeMapping ? JSON.stringify(attributeMapping) : null;
    row.updatedAt = new Date();
    assertComplete(row.type, { ...row, clientId: plainClientId });
    await em.flush();
    return row;
  }

  async delete(id: string): Promise<SsoProvider> {
    const row = await this.get(id);
    const em = this.em();
    // Account links go with the provider: a later provider reusing the id must not sign in as these users by subject.
    await em.nativeDelete(AccountEntity, { providerId: `sso:${row.providerId}` });
    await em.nativeDelete(SsoProviderEntity, { id });
    return row;
  }

  /** The provider for a sign-in: 404 when unknown, 403 when disabled; the secret opened with the system key. */
  async resolveForSignIn(providerId: string, type: SsoProtocol, options: { allowDisabled?: boolean } = {}): Promise<ResolvedSsoProvider> {
    const row = await this.findByProviderId(providerId);
    if (!row || row.type !== type) throw new NotFoundError(`No ${type.toUpperCase()} provider "${providerId}"`);
    if (!row.enabled && !options.allowDisabled) throw new HttpError(403, `SSO provider "${providerId}" is disabled`);
    return {
      row,
      clientId: this.sealer().open(row.clientId),
      clientSecret: row.clientSecret ? this.sealer().open(row.clientSecret) : undefined,
      groupMappings: parseJson<GroupMapping[]>(row.groupMappings, []),
      attributeMapping: parseJson<AttributeMapping>(row.attributeMapping, {}),
      domains: parseDomains(row.domain),
    };
  }

  /** JSON form of a provider row: the client id opened, the secret never. */
  view(row: SsoProvider): SsoProviderView {
    return ssoProviderView(row, this.sealer().open(row.clientId));
  }

  private async assertGroupsExist(em: EntityManager, mappings: GroupMapping[]): Promise<void> {
    const ids = [...new Set(mappings.map((m) => m.groupId))];
    if (ids.length === 0) return;
    const found = new Set((await em.find(GroupEntity, { id: { $in: ids } })).map((g) => g.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new ValidationError(`Group mapping names unknown groups: ${missing.join(', ')}`, [{ path: 'groupMappings', message: 'unknown group id' }]);
    }
  }
}

/** The fields each protocol cannot work without. */
function assertComplete(
  type: string,
  row: { issuer?: string | null; discoveryEndpoint?: string | null; clientId: string; samlEntryPoint?: string | null; samlCertificate?: string | null },
): void {
  const missing: string[] = [];
  if (type === 'oidc') {
    if (!row.issuer && !row.discoveryEndpoint) missing.push('issuer');
    if (!row.clientId) missing.push('clientId');
  } else {
    if (!row.samlEntryPoint) missing.push('samlEntryPoint');
    if (!row.samlCertificate) missing.push('samlCertificate');
  }
  if (missing.length > 0) {
    throw new ValidationError(
      `A ${type.toUpperCase()} provider needs ${missing.join(', ')}`,
      missing.map((path) => ({ path, message: 'required' })),
    );
  }
}

/** JSON form of a provider row (with its opened client id): no secret. */
export function ssoProviderView(row: SsoProvider, clientId: string): SsoProviderView {
  return {
    id: row.id,
    providerId: row.providerId,
    type: row.type === 'saml' ? 'saml' : 'oidc',
    name: row.name,
    enabled: row.enabled,
    allowProvisioning: row.allowProvisioning,
    domain: row.domain ?? null,
    issuer: row.issuer ?? null,
    discoveryEndpoint: row.discoveryEndpoint ?? null,
    clientId,
    hasClientSecret: row.clientSecret !== '',
    scopes: row.scopes ?? null,
    samlEntryPoint: row.samlEntryPoint ?? null,
    samlCertificate: row.samlCertificate ?? null,
    groupClaim: row.groupClaim ?? null,
    groupMappings: parseJson<GroupMapping[]>(row.groupMappings, []),
    attributeMapping: parseJson<AttributeMapping | null>(row.attributeMapping, null),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
