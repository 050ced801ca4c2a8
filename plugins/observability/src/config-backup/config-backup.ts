import { Readable } from 'node:stream';
import { instantiateAdapter, type AdapterRegistry, type ConfigExporter, type EventBus, type JobCatalog, type KernelLogger, type StorageAdapter } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import type { ConfigBackupSettings } from '../settings.js';

/** File names of the self-backup: sortable by time, recognisable for retention. */
const FILE_PATTERN = /^holdfast-config-\d{8}T\d{6}(\d{3})?Z\.json$/;

/** `holdfast-config-20261124T120000123Z.json`. */
export function configBackupFileName(at: Date): string {
  return `holdfast-config-${at.toISOString().replace(/[-:]/g, '').replace('.', '')}.json`;
}

/**
 * The configuration self-backup: the catalog export (secrets sealed with the chosen encryption profile's key) as
 * one JSON file under the prefix of a storage destination, the newest `keep` files kept, and `config_backup` raised
 * with the outcome. Restored with `POST /api/config/import` (or `holdfast config import`) and that profile's key.
 */
export class ConfigBackup {
  constructor(
    private readonly deps: {
      container: DependencyContainer;
      catalog: () => JobCatalog;
      registry: () => AdapterRegistry;
      exporter: () => ConfigExporter | undefined;
      events: () => EventBus | undefined;
      settings: () => Promise<ConfigBackupSettings>;
      logger: KernelLogger;
      now?: () => Date;
    },
  ) {}

  /** One backup; resolves the run message, throws (after raising `config_backup` with the error) on failure. */
  async run(signal?: AbortSignal): Promise<string> {
    const settings = await this.deps.settings();
    const storageId = settings.storageId ?? undefined;
    try {
      if (!storageId) throw new Error('no destination chosen for the configuration backup (configBackup.storageId)');
      const exporter = this.deps.exporter();
      if (!exporter) throw new Error('the catalog export is not available (TOKENS.ConfigExporter is not registered)');
      const document = await exporter.export({ userId: null, ipAddress: null, userAgent: null }, settings.encryptionProfileId ?? undefined);
      const body = Buffer.from(JSON.stringify(document), 'utf8');
      const file = `${settings.prefix}/${configBackupFileName((this.deps.now ?? (() => new Date()))())}`;
      const resolved = await this.deps.catalog().resolveAdapterConfig(storageId);
      if (resolved.kind !== 'storage') throw new Error(`configuration ${storageId} is not a storage destination`);
      const { definition } = this.deps.registry().require('storage', resolved.adapterId);
      const storage = instantiateAdapter(this.deps.container, definition, resolved.config, {
        instanceId: resolved.configId,
        instanceName: resolved.name,
        logger: this.deps.logger,
        credentials: resolved.credentials,
        updateCredentials: resolved.updateCredentials,
      }) as StorageAdapter;
      let removed = 0;
      try {
        await storage.put(file, Readable.from([body]), { size: body.length, signal });
        removed = await this.prune(storage, settings, signal);
      } finally {
        await storage.dispose?.().catch(() => undefined);
      }
      await this.deps.events()?.emit('config_backup', { success: true, file, storageId });
      return `wrote ${file} (${body.length} bytes); removed ${removed} older file(s)`;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await this.deps.events()?.emit('config_backup', { success: false, ...(storageId ? { storageId } : {}), error: message });
      throw error;
    }
  }

  /** Deletes self-backup files beyond the newest `keep`; other files under the prefix are never touched. */
  private async prune(storage: StorageAdapter, settings: ConfigBackupSettings, signal?: AbortSignal): Promise<number> {
    const prefix = `${settings.prefix}/`;
    const keys: string[] = [];
    for await (const object of storage.list(prefix, { signal })) {
      const name = object.key.slice(prefix.length);
      if (object.key.startsWith(prefix) && FILE_PATTERN.test(name)) keys.push(object.key);
    }
    const doomed = keys.sort().reverse().slice(settings.keep);
    for (const key of doomed) await storage.delete(key);
    return doomed.length;
  }
}
