import type { OrmDatabase } from '@holdfast/orm-port';
import { silentLogger, type KernelLogger } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { createApiKey } from './create.js';
import { deleteApiKey, getApiKey, listApiKeys, rotateApiKey, toggleApiKey, updateApiKeyPermissions } from './manage.js';
import { validateApiKey } from './validate.js';
import type { ApiKeyIdentity, ApiKeyView, IssuedApiKey, NewApiKey } from './types.js';

/** The service operations of SPEC "ApiKey", each in its own module. */
export class ApiKeyService {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly database: OrmDatabase,
    private readonly logger: KernelLogger = silentLogger,
  ) {}

  private em(): EntityManager {
    return this.database.em();
  }

  create(userId: string, input: NewApiKey): Promise<IssuedApiKey> {
    return createApiKey(this.em(), userId, input);
  }

  validate(rawKey: string): Promise<ApiKeyIdentity> {
    return validateApiKey(
      { em: this.em(), freshEm: () => this.em(), logger: this.logger, track: (work) => this.track(work) },
      rawKey,
    );
  }

  list(userId?: string): Promise<ApiKeyView[]> {
    return listApiKeys(this.em(), userId);
  }

  getById(id: string): Promise<ApiKeyView> {
    return getApiKey(this.em(), id);
  }

  toggle(id: string, enabled: boolean): Promise<ApiKeyView> {
    return toggleApiKey(this.em(), id, enabled);
  }

  rotate(id: string): Promise<IssuedApiKey> {
    return rotateApiKey(this.em(), id);
  }

  updatePermissions(id: string, permissions: string[]): Promise<ApiKeyView> {
    return updateApiKeyPermissions(this.em(), id, permissions);
  }

  delete(id: string): Promise<ApiKeyView> {
    return deleteApiKey(this.em(), id);
  }

  /** Resolves when every fire-and-forget `lastUsedAt` write started so far has settled (shutdown, tests). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}
