import { join } from 'node:path';
import { createLocalPathPolicy, type LocalPathPolicy } from '@holdfast/kernel';
import { EMBEDDED_DATABASE_FILE } from '@holdfast/database';
import type { ServerSettings } from './runtime-config.js';

/**
 * The operator's local path rule: destinations and restore targets inside `HOLDFAST_LOCAL_ROOTS`, and the data
 * directory, the system key and the embedded database never reachable by any local path (sources only with
 * `HOLDFAST_ALLOW_DATA_DIR_SOURCE=true`).
 */
export function localPathPolicyOf(settings: ServerSettings): LocalPathPolicy {
  return createLocalPathPolicy({
    allowedRoots: settings.localRoots,
    // The database file lives in the data dir; listed too in case a future setting moves it.
    protectedPaths: [settings.dataDir, join(settings.dataDir, EMBEDDED_DATABASE_FILE), ...(settings.keyFile ? [settings.keyFile] : [])],
    isProtectedSourceAllowed: settings.isDataDirSourceAllowed,
  });
}
