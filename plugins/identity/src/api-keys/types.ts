import type { ApiKey } from '../entities/api-key.js';
import { parseList } from '../groups/group-service.js';

/** An API key as services and the API show it: never the hash, never the raw key. */
export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  userId: string;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  enabled: boolean;
  /** May delete backups and take the other protected actions (set at creation only; default false). */
  allowBackupDeletion: boolean;
  createdAt: Date;
}

/** Input of `create`. */
export interface NewApiKey {
  name: string;
  permissions: string[];
  expiresAt?: Date | null;
  allowBackupDeletion?: boolean;
}

/** A key record with its raw key, returned once by `create` and `rotate`. */
export interface IssuedApiKey {
  apiKey: ApiKeyView;
  rawKey: string;
}

/** What a successful validation yields (SPEC "Authentication" 6g). */
export interface ApiKeyIdentity {
  id: string;
  name: string;
  userId: string;
  permissions: string[];
}

/** Strips the hash from a stored row. */
export function toApiKeyView(row: ApiKey): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    permissions: parseList(row.permissions),
    userId: row.userId,
    expiresAt: row.expiresAt ?? null,
    lastUsedAt: row.lastUsedAt ?? null,
    enabled: row.enabled,
    allowBackupDeletion: row.allowBackupDeletion,
    createdAt: row.createdAt,
  };
}
