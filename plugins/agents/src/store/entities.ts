import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/**
 * A remote agent (issue 48): its identity (public key after enrollment), what it reported in its last hello, and its
 * presence. The table is created by `migration.ts`; the store reads and writes it with knex so that token use and
 * status changes are single conditional updates.
 */
export const AgentEntity = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  properties: {
    id: p.string().primary().length(36),
    name: p.string().length(100),
    enabled: p.boolean().default(true),
    /** `pending` (never enrolled), `offline`, `online`, `revoked`. */
    status: p.string().length(16),
    /** Ed25519 public key, raw 32 bytes in base64url; null until enrolled. */
    publicKey: p.string().length(64).nullable(),
    version: p.string().length(64).nullable(),
    host: p.string().length(255).nullable(),
    /** JSON array of the source adapter packages the agent reported. */
    adapters: p.text(),
    /** JSON of the agent's latest health report with `reportedAt`; null before the first. */
    health: p.text().nullable(),
    /** SHA-256 (hex) of the current enrollment token; null when none is outstanding. */
    enrollmentTokenHash: p.string().length(64).nullable(),
    /** Epoch milliseconds: a number compares the same on libsql and PostgreSQL inside the consuming update. */
    enrollmentExpiresAt: p.bigint('number').nullable(),
    lastSeenAt: p.datetime().nullable(),
    /** The server process holding the live connection (several processes on one PostgreSQL); null when offline. */
    holderId: p.string().length(64).nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored agent. */
export type AgentRow = InferEntity<typeof AgentEntity>;
