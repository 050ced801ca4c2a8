
import type { OrmDatabase } from '@holdfast/orm-port';
import type { FilterQuery } from '@mikro-orm/core';
import { AuditLogEntity, type AuditLog } from '../entities/audit-log.js';
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
} as const;

/** Who did something and from where. */
export interface AuditActor {
  userId: string | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/** One thing that happened. `details` is stored as a JSON string. */
export interface AuditEvent {
  action: string;
  resource: string;
  resourceId?: string | null;
  details?: Record<string, unknown>;
}

/** Filters and paging of {@link AuditTrail.list}. */
export interface AuditQuery {
  page: number;
  pageSize: number;
  action?: string;
  resource?: string;
  userId?: string;
  from?: Date;
  to?: Date;
}

/** Writes and reads the audit log. */
export class AuditTrail {
  constructor(private readonly database: OrmDatabase) {}

  /** Appends one entry. */
  async record(actor: AuditActor, event: AuditEvent): Promise<AuditLog> {
    const em = this.database.em();
    const entry = em.create(AuditLogEntity, {
      id: newTimeOrderedId(),
      userId: actor.userId,
      action: event.action,
      resource: event.resource,
      resourceId: event.resourceId ?? null,
      details: event.details ? JSON.stringify(event.details) : null,
      ipAddress: actor.ipAddress ?? null,
      userAgent: actor.userAgent ?? null,
      createdAt: new Date(),
    });
    await em.persistAndFlush(entry);
    return entry;
  }

  /** A page of entries, newest first, with the total count of the filter. */
  async list(query: AuditQuery): Promise<{ entries: AuditLog[]; total: number }> {
    const where: FilterQuery<AuditLog> = {};
    if (query.action) where.action = query.action;
    if (query.resource) where.resource = query.resource;
    if (query.userId) where.userId = query.userId;
    if (query.from || query.to) {
      where.createdAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lte: query.to } : {}) };
    }
    const em = this.database.em();
    const [entries, total] = await em.findAndCount(AuditLogEntity, where, {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return { entries, total };
  }

  /** Deletes entries older than `cutoff`; resolves how many went. */
  async pruneOlderThan(cutoff: Date): Promise<number> {
    const em = this.database.em();
    return em.nativeDelete(AuditLogEntity, { createdAt: { $lt: cutoff } });
  }
}
