export { startServer, type ServerHandle, type StartServerOptions } from './start-server.js';
export { runServerProcess } from './run.js';
export { migrateDatabase, type MigrationReport } from './migrate.js';
export { loadRuntimeConfig, type ServerSettings, type LogLevel } from './runtime-config.js';
export { discoverAdapters, SERVER_MANIFEST_PATH, type DiscoveryOptions } from './discovery/index.js';
export { featurePlugins } from './feature-plugins.js';
export { createLogger } from './logger.js';
export { serverVersion } from './version.js';
export { withOfflineStack, type OfflineStackOptions } from './offline-stack.js';
