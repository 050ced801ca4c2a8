import { ConflictError, NotFoundError } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { EntityName } from '@mikro-orm/core';
import { inUse, withUniqueName } from '../shared/conflicts.js';
import { newId, type Actor, type CatalogDeps } from '../shared/deps.js';
import type { JobRef } from '../shared/references.js';

/** Columns every template-like record has. */
export interface TemplateRow {
  id: string;
  name: string;
  description?: string | null;
  isDefault?: boolean;
  isSystem?: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** How one kind of template differs from the others. */
export interface TemplateKind<Row extends TemplateRow, View, Fields> {
  entity: EntityName<Row>;
  /** `A retention policy`, for messages. */
  label: string;
  /** Audit resource name. */
  resource: string;
  hasDefault: boolean;
  /** The record has an `isSystem` column (seeded, read-only records). */
  hasSystem: boolean;
  /** Validates the kind's own fields (throws 400/404) and returns the column values to store. */
  prepare(fields: Fields, em: EntityManager, current: Row | null): Promise<Partial<Row>>;
  view(row: Row): View;
  /** Jobs that block a delete. */
  usedBy(em: EntityManager, id: string): Promise<JobRef[]>;
}

/** Create/update input common to every kind. */
export interface TemplateInput<Fields> {
  name?: string;
  description?: string | null;
  isDefault?: boolean;
  fields: Fields;
}

/**
 * The rules SPEC gives every template-like record: unique names (409), at most one default (setting one clears
 * the others, in one transaction), system records read-only (409; only `isDefault` may change on them).
 */
export class TemplateStore<Row extends TemplateRow, View, Fields> {
  constructor(
    private readonly deps: CatalogDeps,
    private readonly kind: TemplateKind<Row, View, Fields>,
  ) {}

  async list(): Promise<View[]> {
    const rows = await this.deps.em().find(this.kind.entity, {}, { orderBy: { name: 'asc' } as never });
    return rows.map((row) => this.kind.view(row));
  }

  async find(id: string, em: EntityManager = this.deps.em()): Promise<Row> {
    const row = await em.findOne(this.kind.entity, { id } as never);
    if (!row) throw new NotFoundError(`${this.kind.label.replace(/^An? /, '')} not found`.replace(/^./, (c) => c.toUpperCase()));
    return row;
  }

  async get(id: string): Promise<View> {
    return this.kind.view(await this.find(id));
  }

  async create(input: TemplateInput<Fields> & { name: string }, actor: Actor, isSystem = false): Promise<View> {
    const em = this.deps.em();
    const values = await this.kind.prepare(input.fields, em, null);
    await this.assertNameFree(em, input.name);
    const now = new Date();
    const id = newId();
    await withUniqueName(this.kind.label, input.name, () =>
      em.transactional(async (tx) => {
        if (this.kind.hasDefault && input.isDefault) await this.clearDefault(tx);
        tx.create(this.kind.entity, {
          id,
          name: input.name,
          description: input.description ?? null,
          ...(this.kind.hasDefault ? { isDefault: input.isDefault ?? false } : {}),
          ...(this.kind.hasSystem ? { isSystem } : {}),
          ...values,
          createdAt: now,
          updatedAt: now,
        } as never);
      }),
    );
    if (!isSystem) await this.deps.audit.record(actor, 'CREATE', this.kind.resource, id, { name: input.name });
    return this.get(id);
  }

  async update(id: string, input: TemplateInput<Fields | undefined>, actor: Actor): Promise<View> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    const changesContent = input.name !== undefined || input.description !== undefined || input.fields !== undefined;
    if (row.isSystem && changesContent) {
      throw new ConflictError(`${this.kind.label.replace(/^An? /, 'This ')} is a system record and read-only (only isDefault can change)`);
    }
    const values = input.fields === undefined ? {} : await this.kind.prepare(input.fields, em, row);
    if (input.name !== undefined && input.name !== row.name) await this.assertNameFree(em, input.name, id);
    await withUniqueName(this.kind.label, input.name ?? row.name, () =>
      em.transactional(async (tx) => {
        if (this.kind.hasDefault && input.isDefault) await this.clearDefault(tx);
        const target = await tx.findOneOrFail(this.kind.entity, { id } as never);
        tx.assign(target, {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(this.kind.hasDefault && input.isDefault !== undefined ? { isDefault: input.isDefault } : {}),
          ...values,
          updatedAt: new Date(),
        } as never);
      }),
    );
    await this.deps.audit.record(actor, 'UPDATE', this.kind.resource, id, {
      fields: [...Object.keys(input).filter((key) => key !== 'fields'), ...Object.keys(input.fields ?? {})],
    });
    return this.get(id);
  }

  async delete(id: string, actor: Actor): Promise<void> {
    const em = this.deps.em();
    const row = await this.find(id, em);
    if (row.isSystem) throw new ConflictError(`${this.kind.label.replace(/^An? /, 'This ')} is a system record and cannot be deleted`);
    const jobs = await this.kind.usedBy(em, id);
    if (jobs.length > 0) throw inUse(`${this.kind.label.replace(/^An? /, '').replace(/^./, (c) => c.toUpperCase())} "${row.name}"`, jobs);
    await em.removeAndFlush(row);
    await this.deps.audit.record(actor, 'DELETE', this.kind.resource, id, { name: row.name });
  }

  /** The default record, if one is marked. */
  async findDefault(em: EntityManager = this.deps.em()): Promise<Row | null> {
    return em.findOne(this.kind.entity, { isDefault: true } as never);
  }

  async findByName(name: string, em: EntityManager = this.deps.em()): Promise<Row | null> {
    return em.findOne(this.kind.entity, { name } as never);
  }

  private async clearDefault(em: EntityManager): Promise<void> {
    await em.nativeUpdate(this.kind.entity, { isDefault: true } as never, { isDefault: false } as never);
  }

  private async assertNameFree(em: EntityManager, name: string, exceptId?: string): Promise<void> {
    const existing = await this.findByName(name, em);
    if (existing && existing.id !== exceptId) throw new ConflictError(`${this.kind.label} named "${name}" already exists`);
  }
}
