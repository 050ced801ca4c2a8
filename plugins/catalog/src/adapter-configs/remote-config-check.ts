import { TOKENS, ValidationError, instantiateAdapter, isAdapterError, type AnyAdapterDefinition, type StorageAdapter } from '@holdfast/kernel';
import { credentialsByRole } from '../credentials/credential-store.js';
import type { CatalogDeps } from '../shared/deps.js';

/** A save never waits longer than this for the remote end. */
const VERIFY_TIMEOUT_MS = 10_000;

/**
 * At save: lets a storage adapter that implements `verifyConfig` check that the remote end supports what the config
 * asks for (S3: Object Lock on the bucket, issue 45). A definite "no" (AdapterError CONFIG) refuses the save with a
 * 400 naming the problem, before anything is written; anything else (unreachable, timed out) lets the save through,
 * as saving an unreachable destination always could. Adapters without the method are not even instantiated.
 */
export async function checkRemoteConfig(
  deps: CatalogDeps,
  definition: AnyAdapterDefinition,
  config: Record<string, unknown>,
  refs: { primaryCredentialId?: string | null; sshCredentialId?: string | null },
): Promise<void> {
  const prototype = (definition.implementation as { prototype?: Partial<StorageAdapter> }).prototype;
  if (definition.kind !== 'storage' || typeof prototype?.verifyConfig !== 'function') return;
  let instance: StorageAdapter | undefined;
  try {
    const credentials = await credentialsByRole(deps.em(), deps.box(), refs);
    instance = instantiateAdapter(deps.container, definition, config, { logger: deps.container.resolve(TOKENS.Logger), credentials }) as StorageAdapter;
    await instance.verifyConfig?.({ signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS) });
  } catch (error) {
    if (isAdapterError(error) && error.code === 'CONFIG') {
      const message = error.message.replace(/^\[[^\]]+\] /, '');
      throw new ValidationError(`Invalid request: config: ${message}`, [{ path: 'body.config', message }]);
    }
    deps.logger.debug({ err: error instanceof Error ? error.message : String(error) }, 'save-time remote check skipped');
  } finally {
    await instance?.dispose?.().catch(() => undefined);
  }
}
