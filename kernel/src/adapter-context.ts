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
}

/** Outcome of a connection check. Never thrown: a failed check is a value. */
export interface HealthResult {
  ok: boolean;
  message: string;
  latencyMs?: number;
  /** Detected server/engine version, where the check learns it. */
  version?: string;
}
