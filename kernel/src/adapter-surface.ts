// `@holdfast/kernel/adapter`: the part of the kernel an adapter sees, and all that `@holdfast/sdk` passes on.
// The contracts, the adapter definition, errors, config markers, stream helpers, storage keys and timeouts; none of
// the host's plugin graph, routes, ports or registry (those stay in `@holdfast/kernel`, for plugins, platform and
// apps). Every name is listed, so a kernel addition reaches community adapters only when someone adds it here, and
// the SDK's API report (sdk/adapter/api-report.md) shows it in review.
import { TOKENS as HOST_TOKENS } from './tokens.js';

export type * from './contracts/storage.js';
export type * from './contracts/source.js';
export type * from './contracts/point-in-time.js';
export type * from './contracts/notification.js';
export type * from './contracts/retention.js';
export type * from './contracts/naming.js';

export {
  ADAPTER_API_VERSION,
  ADAPTER_BRAND,
  ADAPTER_ID_PATTERN,
  ADAPTER_KINDS,
  SUPPORTED_ADAPTER_API_VERSIONS,
  type AdapterDefinition,
  type AdapterImplementation,
  type AdapterKind,
  type AnyAdapterDefinition,
  type ConfigOf,
} from './adapter-definition.js';
export type { AdapterContext, HealthResult } from './adapter-context.js';
export {
  ADAPTER_ERROR_CODES,
  AdapterError,
  isAbortError,
  isAdapterError,
  type AdapterErrorCode,
  type AdapterErrorOrigin,
} from './errors.js';
export { instantiateAdapter } from './instantiate.js';
export { silentLogger, type KernelLogger } from './logger.js';
export {
  localPath,
  secret,
  secretFieldsOf,
  secretTarget,
  type LocalPathFieldUse,
} from './config-markers.js';
export {
  createLocalPathPolicy,
  isPathInside,
  type LocalPathPolicy,
  type LocalPathRules,
  type LocalPathUse,
} from './local-paths.js';
export { normalizeStorageKey, normalizeStoragePrefix, splitStorageKey } from './storage-keys.js';
export { objectLockRetainUntil, type ObjectLockPeriods } from './object-lock-date.js';
export { createByteCounter, type ByteCounter, type ProgressListener } from './streams/byte-counter.js';
export { createHashingPassThrough, type HashingPassThrough, type StreamDigests } from './streams/hashing.js';
export { abortablePipeline, awaitFirstByte } from './streams/pipeline.js';
export {
  NOTIFICATION_SEND_TIMEOUT_MS,
  NOTIFICATION_TEST_TIMEOUT_MS,
  sendBounded,
  testBounded,
  withTimeout,
} from './timeouts.js';
export { maskSecrets } from './secret-masking.js';
export { fetchKeepingCredentialsHome } from './http-redirects.js';
export { isKnownTimeZone } from './time-zones.js';

/**
 * The tokens an adapter injects: its parsed config and its context, both registered per instance in a child
 * container by `instantiateAdapter`. The same symbols as the host's `TOKENS` (they are `Symbol.for` keys), without
 * the host's services (database, registry, plugin ports), which an adapter must not reach.
 */
export const TOKENS = {
  AdapterConfig: HOST_TOKENS.AdapterConfig,
  AdapterContext: HOST_TOKENS.AdapterContext,
} as const;
