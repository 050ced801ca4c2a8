import type { IdentitySettings } from '../settings/identity-settings.js';
import type { AuditTrail } from './audit-trail.js';

/** Setting key of the audit retention in days. */
export const AUDIT_RETENTION_SETTING = 'audit.retentionDays';
/** Default audit retention when the setting is unset. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes audit entries older than the configured retention; resolves how many went. */
export async function pruneAuditLog(trail: AuditTrail, settings: IdentitySettings, now = new Date()): Promise<number> {
  const days = await settings.getPositiveInt(AUDIT_RETENTION_SETTING, DEFAULT_AUDIT_RETENTION_DAYS);
  return trail.pruneOlderThan(new Date(now.getTime() - days * DAY_MS));
}
