
import type { ResourceNames } from '@holdfast/kernel';
import type { OrmDatabase } from '@holdfast/orm-port';
import type { FilterQuery } from '@mikro-orm/core';
import { ApiKeyEntity } from '../entities/api-key.js';
import { GroupEntity } from '../entities/group.js';
import { AuditLogEntity, type AuditLog } from '../entities/audit-log.js';
import { UserEntity } from '../entities/user.js';
import { newTimeOrderedId } from '../crypto/tokens.js';

/** Audit actions written by this plugin; other plugins add their own strings (e.g. `EXECUTE` on `job`). */
export const AUDIT_ACTIONS = {
  login: 'LOGIN',
  logout: 'LOGOUT',
  create: 'CREATE',
  update: 'UPDATE',
  delete: 'DELETE',
  execute: 'EXECUTE',
  apiKeyCreate: 'api-key.create',
  apiKeyRotate: 'api-key.rotate',
  apiKeyToggle: 'api-key.toggle',
  apiKeyUpdatePermissions: 'api-key.update-permissions',
  apiKeyDelete: 'api-key.delete',
  /** A sign-in that failed: password, second step, passkey or SSO (details: email tried, reason; never a secret). */
  loginFailed: 'login.failed',
  passwordChange: 'user.password-change',
  passwordReset: 'user.password-reset',
  secondFactorReset: 'user.second-factor-reset',
  userDisable: 'user.disable',
  userEnable: 'user.enable',
} as const;

/**
 * Failed sign-ins written per hour at most, per targeted user and (all together) for emails that match no user.
 * The auth rate limit (5 per minute per address) slows one client; this bound keeps many clients from growing the
 * log without limit. Attempts over the bound are counted in the application log only.
 */
export const FAILED_SIGN_IN_AUDIT_LIMIT_PER_HOUR = 100;
const HOUR_MS = 60 * 60 * 1000;
const NAME_MAX = 255;
/** Resources whose names this plugin reads itself; others are asked of `TOKENS.ResourceNames`. */
const IDENTITY_RESOURCES: ReadonlySet<string> = new Set(['user', 'api-key', 'group', 'session', 'passkey', 'sso-provider', 'two-factor']);

/** Who did something and from where. */
export interface AuditActor {
  userId: string | null;
  /** Display name (user name or API key name); looked up from `userId` / `details.apiKeyId` when not given. */
  actorName?: string | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/** One thing that happened. `details` is stored as a JSON string. */
export interface AuditEvent {
  action: string;
  resource: string;
  resourceId?: string | null;
  /** Name of the resource (user email, key or group name); defaults to a string `details.name`. */
  resourceName?: string | null;
  details?: Record<string, unknown>;
}

/** Filters and paging of {@link AuditTrail.list}. */
export interface AuditQuery {
  page: number;
  pageSize: number;
  action?: string;
  resource?: string;
  userId?: string;
  /** Part of the actor's name (case-insensitive). */
  actor?: string;
  from?: Date;
  to?: Date;
}

/** How an entry's actor signed in, derived from the entry. */
export type AuditActorType = 'user' | 'api-key' | 'anonymous';

/** The actor kind of a stored entry: a key when its details name one, a user when it has one, anonymous otherwise. */
export function actorTypeOf(entry: AuditLog): AuditActorType {
  const details = parseDetails(entry.details);
  if (details.authMethod === 'apikey' || (typeof details.apiKeyId === 'string' && details.apiKeyId !== '')) return 'api-key';
  return entry.userId ? 'user' : 'anonymous';
}

function parseDetails(details: string | null | undefined): Record<string, unknown> {
  if (!details) return {};
  try {
    const parsed: unknown = JSON.parse(details);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const clip = (value: string | null | undefined): string | null => (value ? value.slice(0, NAME_MAX) : null);

/** Writes and reads the audit log. */
export class AuditTrail {
  constructor(
    private readonly database: OrmDatabase,
    /** Names of other plugins' records (`TOKENS.ResourceNames`, the catalog's); without it those stay unnamed. */
    private readonly resourceNames: () => ResourceNames | undefined = () => undefined,
  ) {}

  /** Appends one entry. */
  async record(actor: AuditActor, event: AuditEvent): Promise<AuditLog> {
    const em = this.database.em();
    const actorName = actor.actorName !== undefined ? actor.actorName : await this.actorNameOf(actor.userId, event.details);
    const detailName = typeof event.details?.name === 'string' ? event.details.name : null;
    const entry = em.create(AuditLogEntity, {
      id: newTimeOrderedId(),
      userId: actor.userId,
      actorName: clip(actorName),
      action: event.action,
      resource: event.resource,
      resourceId: event.resourceId ?? null,
      resourceName: clip(event.resourceName !== undefined ? event.resourceName : detailName),
      details: event.details ? JSON.stringify(event.details) : null,
      ipAddress: actor.ipAddress ?? null,
      userAgent: actor.userAgent ?? null,
      createdAt: new Date(),
    });
    await em.persistAndFlush(entry);
    return entry;
  }

  /**
   * Records a failed sign-in (password, second step, passkey, SSO): the email tried or the account's email when
   * known (empty otherwise), the reason and the address, never a password, code, assertion or token. At most
   * {@link FAILED_SIGN_IN_AUDIT_LIMIT_PER_HOUR} per hour per targeted user, and as many for all unknown emails
   * together; resolves whether the entry was written.
   */
  async recordFailedSignIn(
    actor: { userId: string | null; ipAddress?: string | null; userAgent?: string | null },
    emailTried: string,
    reason: string,
    /** More details: how the sign-in was tried (`authMethod`, `providerId`, `passkeyId`); never a secret. */
    extra: Record<string, string | null> = {},
  ): Promise<boolean> {
    const em = this.database.em();
    const since = new Date(Date.now() - HOUR_MS);
    const recent = await em.count(AuditLogEntity, { action: AUDIT_ACTIONS.loginFailed, userId: actor.userId, createdAt: { $gte: since } });
    if (recent >= FAILED_SIGN_IN_AUDIT_LIMIT_PER_HOUR) return false;
    const email = emailTried.trim().toLowerCase().slice(0, 320);
    await this.record(
      { userId: actor.userId, actorName: email, ipAddress: actor.ipAddress ?? null, userAgent: actor.userAgent ?? null },
      { action: AUDIT_ACTIONS.loginFailed, resource: 'session', resourceName: email, details: { email, reason, knownUser: actor.userId !== null, ...extra } },
    );
    return true;
  }

  private filterOf(query: Omit<AuditQuery, 'page' | 'pageSize'>): FilterQuery<AuditLog> {
    const where: FilterQuery<AuditLog> = {};
    if (query.action) where.action = query.action;
    if (query.resource) where.resource = query.resource;
    if (query.userId) where.userId = query.userId;
    if (query.actor) {
      // A filter for readers who see every entry anyway: wildcards in the text only widen the match.
      const pattern = `%${query.actor.toLowerCase()}%`;
      // SQLite's LIKE ignores ASCII case already; PostgreSQL needs ILIKE.
      where.actorName = this.database.dialect === 'postgresql' ? { $ilike: pattern } : { $like: pattern };
    }
    if (query.from || query.to) {
      where.createdAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lte: query.to } : {}) };
    }
    return where;
  }

  /** Every entry of the filter, newest first, in batches of `batchSize` read by keyset (for the CSV export). */
  async *batches(query: Omit<AuditQuery, 'page' | 'pageSize'>, batchSize = 500): AsyncGenerator<AuditLog[]> {
    const base = this.filterOf(query);
    let last: AuditLog | undefined;
    for (;;) {
      const where: FilterQuery<AuditLog> = last
        ? { $and: [base, { $or: [{ createdAt: { $lt: last.createdAt } }, { createdAt: last.createdAt, id: { $lt: last.id } }] }] }
        : base;
      const batch = await this.database.em().fork().find(AuditLogEntity, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: batchSize });
      if (batch.length > 0) yield batch;
      if (batch.length < batchSize) return;
      last = batch[batch.length - 1];
    }
  }

  /** A page of entries, newest first, with the total count of the filter. */
  async list(query: AuditQuery): Promise<{ entries: AuditLog[]; total: number }> {
    const where = this.filterOf(query);
    const em = this.database.em();
    const [entries, total] = await em.findAndCount(AuditLogEntity, where, {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return { entries, total };
  }

  /**
   * Names for entries written without one (older entries, other plugins' entries): the current email of a user,
   * name of an API key or group that still exists, the current name of another plugin's record through
   * {@link ResourceNames} (one query per resource type), and the actor's current name. Keyed by entry id. A record
   * that no longer exists, or a lookup that fails, leaves the name null: reading the log never fails on it.
   */
  async namesOf(entries: readonly AuditLog[]): Promise<Map<string, { actorName: string | null; resourceName: string | null }>> {
    const em = this.database.em().fork();
    const wanted = (resource: string) => [...new Set(entries.filter((e) => !e.resourceName && e.resource === resource && e.resourceId).map((e) => e.resourceId!))];
    const actorIds = [...new Set(entries.filter((e) => !e.actorName && e.userId).map((e) => e.userId!))];
    const userIds = [...new Set([...wanted('user'), ...actorIds])];
    const [users, keys, groups, foreign] = await Promise.all([
      userIds.length ? em.find(UserEntity, { id: { $in: userIds } }, { fields: ['name', 'email'] }) : [],
      wanted('api-key').length ? em.find(ApiKeyEntity, { id: { $in: wanted('api-key') } }, { fields: ['name'] }) : [],
      wanted('group').length ? em.find(GroupEntity, { id: { $in: wanted('group') } }, { fields: ['name'] }) : [],
      this.foreignNamesOf(entries),
    ]);
    const userById = new Map(users.map((u) => [u.id, u]));
    const resourceNames = new Map<string, string>([
      ...foreign,
      ...users.map((u) => [`user:${u.id}`, u.email] as const),
      ...keys.map((k) => [`api-key:${k.id}`, k.name] as const),
      ...groups.map((g) => [`group:${g.id}`, g.name] as const),
    ]);
    return new Map(
      entries.map((entry) => [
        entry.id,
        {
          actorName: entry.actorName ?? (entry.userId ? (userById.get(entry.userId)?.name ?? null) : null),
          resourceName: entry.resourceName ?? (entry.resourceId ? (resourceNames.get(`${entry.resource}:${entry.resourceId}`) ?? null) : null),
        },
      ]),
    );
  }

  // Other plugins' records of unnamed entries, keyed `resource:id`; one lookup per resource type.
  private async foreignNamesOf(entries: readonly AuditLog[]): Promise<Array<readonly [string, string]>> {
    const port = this.resourceNames();
    if (!port) return [];
    const idsByResource = new Map<string, Set<string>>();
    for (const entry of entries) {
      if (entry.resourceName || !entry.resourceId || IDENTITY_RESOURCES.has(entry.resource)) continue;
      const ids = idsByResource.get(entry.resource) ?? new Set<string>();
      ids.add(entry.resourceId);
      idsByResource.set(entry.resource, ids);
    }
    const found = await Promise.all(
      [...idsByResource].map(async ([resource, ids]) => {
        // A failing lookup leaves the names out; the log is still read.
        const names = await port.namesOf(resource, [...ids]).catch(() => new Map<string, string>());
        return [...names].map(([id, name]) => [`${resource}:${id}`, name] as const);
      }),
    );
    return found.flat();
  }

  // The name at the time of the action: the key's when the details name one, the user's otherwise.
  private async actorNameOf(userId: string | null, details: Record<string, unknown> | undefined): Promise<string | null> {
    const em = this.database.em().fork();
    const apiKeyId = details?.apiKeyId;
    if (typeof apiKeyId === 'string' && apiKeyId !== '') {
      const key = await em.findOne(ApiKeyEntity, { id: apiKeyId }, { fields: ['name'] });
      if (key) return key.name;
    }
    if (!userId) return null;
    const user = await em.findOne(UserEntity, { id: userId }, { fields: ['name'] });
    return user?.name ?? null;
  }

  /** Deletes entries older than `cutoff`; resolves how many went. */
  async pruneOlderThan(cutoff: Date): Promise<number> {
    const em = this.database.em();
    return em.nativeDelete(AuditLogEntity, { createdAt: { $lt: cutoff } });
  }
}
