import type { EventBus, JobCatalog, KernelLogger, SettingsReader } from '@holdfast/kernel';
import type { AdapterFactory } from './adapters.js';
import type { KeyReservations } from './key-reservations.js';

/** What runs need from the rest of the system, resolved once by the plugin. */
export interface RunServices {
  catalog: JobCatalog;
  settings: SettingsReader;
  adapters: AdapterFactory;
  events: EventBus | undefined;
  logger: KernelLogger;
  /** Backup keys handed out to runs still writing them. */
  keys: KeyReservations;
  /** Release number of the engine, written into sidecars. */
  version: string;
}

/** A setting with a fallback when the reader has no value (settings not seeded, tests). */
export async function settingOr<T>(settings: SettingsReader, key: string, fallback: T): Promise<T> {
  const value = await settings.get<T | undefined>(key);
  return value === undefined || value === null ? fallback : value;
}
