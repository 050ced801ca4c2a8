/** Ports the identity plugin implements, registered under the matching TOKENS. */
import type { RouteRequest } from '../http-contract.js';

/** One audit entry (SPEC "AuditLog"); the writer never throws to its caller. */
export interface AuditEntry {
  userId?: string | null;
  action: string;
  resource: string;
  resourceId?: string | null;
  details?: Record<string, unknown> | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/** Writes audit entries (registered by the identity plugin). */
export interface AuditWriter {
  write(entry: AuditEntry): Promise<void>;
}

/**
 * Actions that can lose backups (issue 45.4). Each needs a fresh second factor from a signed-in user who has one,
 * or an API key created with `allowBackupDeletion`; each is audited and raises `protected_action`.
 */
export type ProtectedActionKind =
  | 'backup.delete'
  | 'backup.unlock'
  | 'destination.delete'
  | 'encryption-profile.delete'
  | 'retention.change'
  /** A storage destination's lock settings changed (Object Lock mode or days, immutability). */
  | 'destination.lock-change'
  /** Adding, replacing or removing one's own second factors while having one (else step-up could be bypassed). */
  | 'second-factor.change'
  /** Creating an API key with `allowBackupDeletion`, which hands the other actions to a key. */
  | 'api-key.allow-backup-deletion';

/** One protected action as the route that takes it describes it. */
export interface ProtectedAction {
  kind: ProtectedActionKind;
  /** Audit resource (`storage`, `adapter`, `encryption-profile`, `job`). */
  resource: string;
  resourceId: string | null;
  /** Shown in the audit entry and the notification: file names, old and new retention. Never a secret. */
  details?: Record<string, unknown>;
}

/** How the caller proved it may take a protected action. */
export interface ProtectedActionProof {
  /** `totp`, `backup-code`, `passkey`: a second factor; `none`: a user with no second factor; `api-key`: the key option. */
  method: 'totp' | 'backup-code' | 'passkey' | 'none' | 'api-key';
  /** When the second factor was last proven (ISO), for `totp`, `backup-code` and `passkey`. */
  provenAt?: string;
}

/**
 * The guard of protected actions (identity plugin, `TOKENS.ProtectedActions`). `authorize` throws a 403 whose
 * `details.code` is `SECOND_FACTOR_REQUIRED` or `API_KEY_NOT_ALLOWED` (and audits the refusal); `recordDone`
 * writes the audit entry and raises the `protected_action` event after the action succeeded.
 */
export interface ProtectedActionGuard {
  authorize(request: RouteRequest, action: ProtectedAction): Promise<ProtectedActionProof>;
  recordDone(request: RouteRequest, action: ProtectedAction, proof: ProtectedActionProof): Promise<void>;
}
