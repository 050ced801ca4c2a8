import { delimiter, isAbsolute, resolve } from 'node:path';
import { ADAPTER_ID_PATTERN, ADAPTER_NAME_PREFIX, type RuntimeConfig } from '@holdfast/kernel';
import { resolveConnectionTarget } from '@holdfast/database';

/** The kernel's runtime config plus the settings only the server itself reads. */
export interface ServerSettings extends RuntimeConfig {
  /** Trust `X-Forwarded-*` headers (behind a reverse proxy). */
  trustProxy: boolean;
  logLevel: LogLevel;
  /** Folders local destinations and restore targets must live in (`HOLDFAST_LOCAL_ROOTS`). */
  localRoots: string[];
  /** Directory sources may read the data directory (`HOLDFAST_ALLOW_DATA_DIR_SOURCE`). */
  isDataDirSourceAllowed: boolean;
  /** The system key file when it lives outside the data directory (`HOLDFAST_ENCRYPTION_KEY_FILE`). */
  keyFile?: string;
}

/**
 * Default of `HOLDFAST_LOCAL_ROOTS`: `./backups` beside the default data dir, and the Debian-style backup folder.
 * Never the OS temp dir: every local user can plant files and links there.
 */
export function defaultLocalRoots(): string[] {
  return [resolve('backups'), '/var/backups/holdfast'];
}

/** `HOLDFAST_LOCAL_ROOTS`: absolute folders separated by commas (or the OS path delimiter). */
function readLocalRoots(value: string | undefined): string[] {
  const entries = (value ?? '').split(delimiter === ':' ? /[,:]/ : /[,;]/).map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0) return defaultLocalRoots();
  for (const entry of entries) {
    if (!isAbsolute(entry)) throw new Error(`HOLDFAST_LOCAL_ROOTS entry "${entry}" must be an absolute path`);
  }
  return entries.map((entry) => resolve(entry));
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A pino level name. */
export type LogLevel = (typeof LOG_LEVELS)[number];

function readPort(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 3000;
  const port = Number(value);
  if (!/^\d+$/.test(value.trim()) || port > 65535) {
    throw new Error(`PORT must be an integer between 0 and 65535 (got "${value}")`);
  }
  return port;
}

/** Older releases spelled notification channels `notification-<id>`; still accepted and read as `notify-<id>`. */
const LEGACY_NOTIFICATION_PREFIX = 'notification-';

function readAdapterList(variable: string, value: string | undefined): string[] {
  const names = (value ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const prefixes = Object.values(ADAPTER_NAME_PREFIX);
  return names.map((name) => {
    const canonical = name.startsWith(LEGACY_NOTIFICATION_PREFIX)
      ? `${ADAPTER_NAME_PREFIX.notification}-${name.slice(LEGACY_NOTIFICATION_PREFIX.length)}`
      : name;
    const prefix = prefixes.find((candidate) => canonical.startsWith(`${candidate}-`));
    if (!prefix || !ADAPTER_ID_PATTERN.test(canonical.slice(prefix.length + 1))) {
      throw new Error(`${variable} entry "${name}" is not an adapter name like storage-local (prefixes: ${prefixes.join(', ')})`);
    }
    return canonical;
  });
}

function readBoolean(variable: string, value: string | undefined): boolean {
  const normalised = (value ?? '').trim().toLowerCase();
  if (['', 'false', '0', 'no'].includes(normalised)) return false;
  if (['true', '1', 'yes'].includes(normalised)) return true;
  throw new Error(`${variable} must be true or false (got "${value}")`);
}

function readLogLevel(value: string | undefined): LogLevel {
  const level = (value ?? 'info').trim().toLowerCase() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${value}")`);
  }
  return level as LogLevel;
}

/** Reads and checks the server's environment once; every bad value is an error naming its variable. */
export function loadRuntimeConfig(env: NodeJS.ProcessEnv, version: string): ServerSettings {
  const dataDir = resolve(env.HOLDFAST_DATA_DIR?.trim() || './data');
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  // Checked here too so a bad URL fails before discovery or plugins do any work.
  resolveConnectionTarget(dataDir, databaseUrl);
  const pluginDir = env.HOLDFAST_PLUGIN_DIR?.trim();
  return {
    version,
    dataDir,
    databaseUrl,
    port: readPort(env.PORT),
    pluginDir: pluginDir ? resolve(pluginDir) : undefined,
    includeAdapters: readAdapterList('HOLDFAST_ADAPTERS_INCLUDE', env.HOLDFAST_ADAPTERS_INCLUDE),
    excludeAdapters: readAdapterList('HOLDFAST_ADAPTERS_EXCLUDE', env.HOLDFAST_ADAPTERS_EXCLUDE),
    trustProxy: readBoolean('TRUST_PROXY', env.TRUST_PROXY),
    logLevel: readLogLevel(env.LOG_LEVEL),
    localRoots: readLocalRoots(env.HOLDFAST_LOCAL_ROOTS),
    isDataDirSourceAllowed: readBoolean('HOLDFAST_ALLOW_DATA_DIR_SOURCE', env.HOLDFAST_ALLOW_DATA_DIR_SOURCE),
    keyFile: env.HOLDFAST_ENCRYPTION_KEY_FILE?.trim() ? resolve(env.HOLDFAST_ENCRYPTION_KEY_FILE.trim()) : undefined,
  };
}
