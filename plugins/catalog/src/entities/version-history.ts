import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * SPEC "DbVersionHistory": one row per detected change of a source's engine version or edition. The first row of a
 * source has no previous version; later rows are added only when the detection differs from the latest row.
 */
export const DbVersionHistoryEntity = defineEntity({
  name: 'DbVersionHistory',
  tableName: 'db_version_history',
  properties: {
    id: p.string().primary().length(36),
    adapterConfigId: p.string().length(36),
    previousVersion: p.string().nullable(),
    newVersion: p.string(),
    edition: p.string().nullable(),
    detectedAt: p.datetime(),
  },
});

/** A stored version history row. */
export type DbVersionHistoryRow = InferEntity<typeof DbVersionHistoryEntity>;
