import { defineMigration, type OrmDatabase } from '@holdfast/orm-port';
import { randomUUID } from 'node:crypto';
import type { NotificationField } from '@holdfast/kernel';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/knex';

const TABLE = 'notification_log';

/** SPEC "NotificationLog": one row per delivery attempt to one channel. */
export const NotificationLogEntity = defineEntity({
  name: 'NotificationLog',
  tableName: TABLE,
  properties: {
    id: p.string().primary().length(36),
    eventType: p.string().length(64),
    channelId: p.string().length(36).nullable(),
    channelName: p.string(),
    adapterId: p.string().length(100),
    status: p.string().length(16),
    title: p.text(),
    message: p.text(),
    fields: p.text(),
    color: p.string().length(16).nullable(),
    renderedHtml: p.text().nullable(),
    renderedPayload: p.text().nullable(),
    error: p.text().nullable(),
    executionId: p.string().length(36).nullable(),
    sentAt: p.datetime(),
  },
});

type NotificationLogRow = InferEntity<typeof NotificationLogEntity>;

/** Creates `notification_log` with the indexes its listing and pruning use (newest first, by execution/channel). */
export const createNotificationLogTable = defineMigration('20261123-notifications-001-log', async (knex) => {
  await knex.schema.createTable(TABLE, (t) => {
    t.string('id', 36).primary();
    t.string('event_type', 64).notNullable();
    t.string('channel_id', 36).nullable();
    t.string('channel_name', 255).notNullable();
    t.string('adapter_id', 100).notNullable();
    t.string('status', 16).notNullable();
    t.text('title').notNullable();
    t.text('message').notNullable();
    t.text('fields').notNullable();
    t.string('color', 16).nullable();
    t.text('rendered_html').nullable();
    t.text('rendered_payload').nullable();
    t.text('error').nullable();
    t.string('execution_id', 36).nullable();
    t.datetime('sent_at', { useTz: true }).notNullable();
    t.index(['sent_at'], 'notification_log_sent_at_idx');
    t.index(['execution_id'], 'notification_log_execution_idx');
    t.index(['channel_id', 'sent_at'], 'notification_log_channel_idx');
    t.index(['event_type', 'sent_at'], 'notification_log_event_idx');
  });
});

/** What a dispatcher records about one attempt. */
export interface NotificationLogInput {
  eventType: string;
  channelId: string | null;
  channelName: string;
  adapterId: string;
  status: 'Success' | 'Failed';
  title: string;
  message: string;
  fields: NotificationField[];
  color?: string | null;
  renderedPayload?: string | null;
  error?: string | null;
  executionId?: string | null;
}

/** A log entry as the API answers it. */
export interface NotificationLogEntry extends Omit<NotificationLogInput, 'color' | 'renderedPayload' | 'error' | 'executionId'> {
  id: string;
  color: string | null;
  renderedHtml: string | null;
  renderedPayload: string | null;
  error: string | null;
  executionId: string | null;
  sentAt: string;
}

/** Filters and paging of {@link NotificationLogStore.list}. */
export interface NotificationLogQuery {
  page: number;
  pageSize: number;
  eventType?: string;
  status?: 'Success' | 'Failed';
  channelId?: string;
  executionId?: string;
}

/** Where attempts are recorded; the dispatcher only needs `write`. */
export interface NotificationLogWriter {
  write(entry: NotificationLogInput): Promise<void>;
}

function toEntry(row: NotificationLogRow): NotificationLogEntry {
  let fields: NotificationField[] = [];
  try {
    fields = JSON.parse(row.fields) as NotificationField[];
  } catch {
    // A row written by hand or truncated: show no fields rather than failing the whole page.
  }
  return {
    id: row.id,
    eventType: row.eventType,
    channelId: row.channelId ?? null,
    channelName: row.channelName,
    adapterId: row.adapterId,
    status: row.status as 'Success' | 'Failed',
    title: row.title,
    message: row.message,
    fields,
    color: row.color ?? null,
    renderedHtml: row.renderedHtml ?? null,
    renderedPayload: row.renderedPayload ?? null,
    error: row.error ?? null,
    executionId: row.executionId ?? null,
    sentAt: new Date(row.sentAt).toISOString(),
  };
}

/** The notification log table: writes, filtered newest-first pages, and pruning by age. */
export class NotificationLogStore implements NotificationLogWriter {
  constructor(
    private readonly database: () => OrmDatabase,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private em(): EntityManager {
    return this.database().em();
  }

  async write(entry: NotificationLogInput): Promise<void> {
    const em = this.em();
    em.create(NotificationLogEntity, {
      id: randomUUID(),
      eventType: entry.eventType,
      channelId: entry.channelId,
      channelName: entry.channelName.slice(0, 255),
      adapterId: entry.adapterId,
      status: entry.status,
      title: entry.title,
      message: entry.message,
      fields: JSON.stringify(entry.fields),
      color: entry.color ?? null,
      renderedHtml: null,
      renderedPayload: entry.renderedPayload ?? null,
      error: entry.error ?? null,
      executionId: entry.executionId ?? null,
      sentAt: this.now(),
    });
    await em.flush();
  }

  async list(query: NotificationLogQuery): Promise<{ entries: NotificationLogEntry[]; total: number }> {
    const where: Record<string, unknown> = {};
    if (query.eventType) where.eventType = query.eventType;
    if (query.status) where.status = query.status;
    if (query.channelId) where.channelId = query.channelId;
    if (query.executionId) where.executionId = query.executionId;
    const [rows, total] = await this.em().findAndCount(NotificationLogEntity, where, {
      orderBy: { sentAt: 'desc', id: 'desc' },
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return { entries: rows.map(toEntry), total };
  }

  /** Deletes entries older than `days`; answers how many went. */
  async prune(days: number): Promise<number> {
    const cutoff = new Date(this.now().getTime() - days * 86_400_000);
    return this.em().nativeDelete(NotificationLogEntity, { sentAt: { $lt: cutoff } });
  }
}
