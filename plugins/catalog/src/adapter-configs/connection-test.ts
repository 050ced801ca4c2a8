import {
  REMOTE_SOURCE_RUNNER,
  TOKENS,
  ValidationError,
  instantiateAdapter,
  testBounded,
  withTimeout,
  type NotificationChannel,
  type SourceAdapter,
  type StorageAdapter,
} from '@holdfast/kernel';
import { credentialsByRole } from '../credentials/credential-store.js';
import { credentialUpdater } from '../credentials/credential-refresh.js';
import type { CatalogDeps } from '../shared/deps.js';
import type { AdapterConfigService } from './adapter-config-service.js';
import type { TestConnectionInput } from './adapter-schemas.js';
import { validateConfig } from './adapter-secrets.js';
import { VersionHistory } from './version-history.js';
import { mergeStoredSecrets } from './secret-targets.js';
import { checkLocalPaths } from './local-path-check.js';
import { definitionFor, kindOfType, secretFields, type AdapterConfigType } from './adapter-types.js';
import { checkAgentBinding } from './agent-binding.js';

/** A source or storage check that never answers is cut off after this long. */
export const CHECK_TIMEOUT_MS = 30_000;

/** Outcome of a connection test. */
export interface ConnectionTestResult {
  success: boolean;
  message: string;
  latencyMs?: number;
  version?: string;
  edition?: string;
}

/** The type a test acts on, for the permission check before anything is decrypted. */
export async function typeOfTest(service: AdapterConfigService, input: TestConnectionInput): Promise<AdapterConfigType> {
  if (input.id) return (await service.find(input.id)).type as AdapterConfigType;
  if (!input.type) {
    throw new ValidationError('Invalid request: body: send an existing "id", or "type", "adapterId" and "config"', [
      { path: 'body.type', message: 'required when no id is given' },
    ]);
  }
  return input.type;
}

/**
 * Tests a saved or unsaved configuration: `check()` for sources and storage, the kernel's bounded `test()` (10 s)
 * for notification channels. Secrets left empty are taken from the saved row when an id is given. The outcome of
 * a saved configuration is stored as its health.
 */
export async function testConnection(
  deps: CatalogDeps,
  service: AdapterConfigService,
  input: TestConnectionInput,
): Promise<ConnectionTestResult> {
  const row = input.id ? await service.find(input.id) : null;
  const type = (row?.type as AdapterConfigType | undefined) ?? input.type;
  const adapterId = row?.adapterId ?? input.adapterId;
  if (!type || !adapterId || (!row && !input.config)) {
    throw new ValidationError('Invalid request: body: send an existing "id", or "type", "adapterId" and "config"', [
      { path: 'body', message: 'id, or type + adapterId + config, required' },
    ]);
  }
  if (row && ((input.type && input.type !== type) || (input.adapterId && input.adapterId !== adapterId))) {
    throw new ValidationError('Invalid request: type and adapterId must match the saved configuration');
  }
  const definition = definitionFor(deps.registry(), type, adapterId);
  const storedPlain = row ? service.plainConfig(row) : null;
  const submitted = input.config ?? storedPlain ?? {};
  const config = validateConfig(definition, mergeStoredSecrets(definition, submitted, storedPlain, secretFields(definition)));
  const agentId = input.agentId === undefined ? (row?.agentId ?? null) : input.agentId;
  await checkAgentBinding(deps.container, type, agentId);
  // The paths of a source on an agent are the agent host's: the server's local path rule does not apply to them.
  if (!agentId) await checkLocalPaths(deps.container, definition, config);
  const refs = {
    primaryCredentialId: input.primaryCredentialId === undefined ? row?.primaryCredentialId : input.primaryCredentialId,
    sshCredentialId: input.sshCredentialId === undefined ? row?.sshCredentialId : input.sshCredentialId,
  };
  const em = deps.em();
  const credentials = await credentialsByRole(em, deps.box(), refs);
  const required = definition.requiredCredentials ?? [];
  const primaryType = credentials.primary?.type;
  let result: ConnectionTestResult;
  if (required.length > 0 && (typeof primaryType !== 'string' || !required.includes(primaryType))) {
    result = { success: false, message: `${definition.kind}-${definition.id} requires a credential profile of type ${required.join(' or ')}` };
  } else {
    // A source bound to an agent is tested from the agent (issue 48); an offline agent is reported at once.
    const remote = agentId ? deps.container.resolve(REMOTE_SOURCE_RUNNER) : undefined;
    result = await runCheck(deps, definition.kind, () =>
      remote
        ? remote.source(
            { configId: row?.id ?? '', name: row?.name ?? 'unsaved source', kind: kindOfType(type), adapterId, config, credentials, agentId: agentId! },
            { offlineWaitMs: 0 },
          )
        : instantiateAdapter(deps.container, definition, config, {
        instanceId: row?.id,
        instanceName: row?.name,
        logger: deps.container.resolve(TOKENS.Logger),
        credentials,
        updateCredentials: credentialUpdater(() => deps.em(), () => deps.box(), refs),
      }),
    );
  }
  if (row) await service.recordHealth(row.id, result.success, result.message);
  // SPEC "DbVersionHistory": every connection test of a saved source records what it detected.
  if (row && type === 'database' && result.success && result.version) {
    await new VersionHistory(deps).record(row.id, { version: result.version, edition: result.edition });
  }
  return result;
}

async function runCheck(deps: CatalogDeps, kind: string, build: () => unknown): Promise<ConnectionTestResult> {
  let instance: { dispose?(): Promise<void> } | undefined;
  try {
    instance = build() as { dispose?(): Promise<void> };
    if (kind === 'notification') return await testBounded(instance as NotificationChannel);
    const started = Date.now();
    const work = (instance as SourceAdapter | StorageAdapter).check().then(async (health): Promise<ConnectionTestResult> => {
      const result: ConnectionTestResult = {
        success: health.ok,
        message: health.message,
        latencyMs: health.latencyMs ?? Date.now() - started,
        ...(health.version ? { version: health.version } : {}),
      };
      // Sources also name their engine and edition (MySQL or MariaDB...) for the version history.
      if (kind === 'source' && health.ok) {
        const detected = await (instance as SourceAdapter).detectVersion().catch(() => undefined);
        if (detected?.version) Object.assign(result, { version: detected.version, ...(detected.edition ? { edition: detected.edition } : {}) });
      }
      return result;
    });
    return await withTimeout<ConnectionTestResult>(work, CHECK_TIMEOUT_MS, () => ({
      success: false,
      message: `Timed out after ${CHECK_TIMEOUT_MS / 1000} seconds`,
    }));
  } catch (error) {
    // Adapter errors never carry secrets (contract); anything else is reduced to its message.
    return { success: false, message: error instanceof Error ? error.message : String(error) };
  } finally {
    await instance?.dispose?.().catch((error: unknown) => deps.logger.warn({ err: String(error) }, 'adapter dispose failed'));
  }
}
