export { HoldfastClient, signIn, networkAwareFetch, type HoldfastApi, type HoldfastClientOptions, type SessionAuth } from './client.js';
export { HoldfastError, HoldfastApiError, HoldfastNetworkError, apiError } from './errors.js';
export { runAndWait, waitForExecution, getExecution, type RunAndWaitOptions, type RunProgress } from './run-and-wait.js';
export { watchExecution, type WatchOptions } from './watch.js';
export {
  FINAL_STATUSES,
  type ExecutionView,
  type ExecutionStatus,
  type ExecutionEvent,
  type ProgressEvent,
  type LogEvent,
  type StatusEvent,
} from './types.js';
export type { paths, components, operations } from './generated/schema.js';
