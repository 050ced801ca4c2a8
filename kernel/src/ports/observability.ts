/** Ports the observability plugin implements, registered under the matching TOKENS. */

/** Health status of a source, destination or channel (SPEC `AdapterConfig.lastStatus`). */
export type AdapterHealthStatus = 'ONLINE' | 'DEGRADED' | 'OFFLINE';

/** The current health of one adapter configuration: the SPEC fields of `AdapterConfig` the API answers with. */
export interface AdapterHealthState {
  lastHealthCheck: Date | null;
  lastStatus: AdapterHealthStatus;
  lastError: string | null;
  consecutiveFailures: number;
}

/** The state of a configuration never checked or tested. */
export const UNCHECKED_ADAPTER_HEALTH: Readonly<AdapterHealthState> = Object.freeze({ lastHealthCheck: null, lastStatus: 'ONLINE', lastError: null, consecutiveFailures: 0 });

/**
 * The health state of adapter configurations, kept by observability in its own `adapter_health` table (its
 * HEALTH_CHECK task writes it). The catalog shows it in its adapter answers and records connection tests through it.
 */
export interface AdapterHealth {
  /** The recorded state of each of the given configurations that has one; one never checked is left out. */
  statesOf(configIds: readonly string[]): Promise<Map<string, AdapterHealthState>>;
  /**
   * Records a connection test of a saved configuration: `ONLINE` and no error on success; otherwise `OFFLINE`, the
   * message (first 2000 characters) and one more consecutive failure.
   */
  recordConnectionTest(configId: string, ok: boolean, message: string): Promise<void>;
}
