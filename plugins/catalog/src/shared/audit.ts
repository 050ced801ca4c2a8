import { TOKENS, type AuditEntry, type KernelLogger } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import type { Actor } from './deps.js';

/** Audit actions the catalog writes (SPEC "AuditLog" action values). */
export type AuditAction = 'CREATE' | 'UPDATE' | 'DELETE' | 'REVEAL' | 'EXPORT' | 'IMPORT' | 'ROTATE_KEY' | 'RECOVERY_KIT';

/**
 * Writes audit entries through the identity plugin's `TOKENS.AuditWriter`. Without one (tests, minimal setups)
 * the entry goes to the log instead, so it is never silently lost. Never throws: auditing must not fail a change
 * that already happened. Callers pass only ids and field names in `details`, never values.
 */
export class AuditTrail {
  constructor(
    private readonly container: DependencyContainer,
    private readonly logger: KernelLogger,
  ) {}

  async record(
    actor: Actor,
    action: AuditAction,
    resource: string,
    resourceId: string | null,
    details?: Record<string, unknown>,
  ): Promise<void> {
    const entry: AuditEntry = {
      userId: actor.userId ?? null,
      action,
      resource,
      resourceId,
      details: details ?? null,
      ipAddress: actor.ipAddress ?? null,
      userAgent: actor.userAgent ?? null,
    };
    try {
      if (this.container.isRegistered(TOKENS.AuditWriter, true)) {
        await this.container.resolve(TOKENS.AuditWriter).write(entry);
        return;
      }
      this.logger.info({ audit: entry }, 'audit entry (no audit writer registered)');
    } catch (error) {
      this.logger.warn({ action, resource, resourceId, err: (error as Error).message }, 'audit entry could not be written');
    }
  }
}
