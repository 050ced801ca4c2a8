import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A configured source, storage destination or notification channel (SPEC "AdapterConfig"). `config` is JSON whose
 * secret fields hold SecretBox-sealed strings; they never leave the catalog except decrypted for the engine.
 * The table still holds the four health columns of before (`last_health_check`, `last_status`, `last_error`,
 * `consecutive_failures`), unused and unmapped: the health state is observability's `adapter_health` (copied there
 * by its migration `20261205-observability-002-adapter-health`), read through `TOKENS.AdapterHealth`.
 */
export const AdapterConfigEntity = defineEntity({
  name: 'AdapterConfig',
  tableName: 'adapter_configs',
  properties: {
    id: p.string().primary().length(36),
    name: p.string(),
    /** `database`, `storage` or `notification` (SPEC); `database` is the kernel kind `source`. */
    type: p.string(),
    adapterId: p.string(),
    config: p.text(),
    metadata: p.text().nullable(),
    primaryCredentialId: p.string().length(36).nullable(),
    sshCredentialId: p.string().length(36).nullable(),
    defaultRetentionPolicyId: p.string().length(36).nullable(),
    excludeFromRestore: p.boolean().default(false),
    /** Sources only: the remote agent that runs this source (issue 48, docs/agents.md); null runs it on the server. */
    agentId: p.string().length(36).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored adapter configuration row. */
export type AdapterConfigRow = InferEntity<typeof AdapterConfigEntity>;
