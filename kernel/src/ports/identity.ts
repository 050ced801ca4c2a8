/** Ports the identity plugin implements, registered under the matching TOKENS. */

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
