import type { LocalPathPolicy } from './local-paths.js';
import type { KernelLogger } from './logger.js';

/** What the kernel hands each adapter instance besides its config. */
export interface AdapterContext {
  /** AdapterConfig row id, when the instance comes from a saved configuration. */
  instanceId?: string;
  /** Display name of the configured instance. */
  instanceName?: string;
  logger: KernelLogger;
  /** Decrypted credential profile payloads by role (`primary`, `ssh`), when assigned. */
  credentials?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /**
   * Merges `patch` into the credential profile assigned under `role` and stores it encrypted (a refreshed OAuth
   * access token, a rotated refresh token); set by the host when the instance comes from saved profiles.
   */
  updateCredentials?(role: string, patch: Record<string, unknown>): Promise<void>;
  /** The operator's rule for local paths (allowed roots, the data directory never reachable); set by the host. */
  localPaths?: LocalPathPolicy;
}

/** Outcome of a connection check. Never thrown: a failed check is a value. */
export interface HealthResult {
  ok: boolean;
  message: string;
  latencyMs?: number;
  /** Detected server/engine version, where the check learns it. */
  version?: string;
}
