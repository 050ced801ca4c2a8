import { NotFoundError, type SettingsReader } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import type { Actor, CatalogDeps } from '../shared/deps.js';
import {
  SETTING_DEFINITIONS,
  SETTING_KEYS,
  decodeSetting,
  encodeSetting,
  type SettingKey,
  type SettingsValues,
} from './setting-definitions.js';

/** The settings table, owned by the catalog; other plugins read it only through `TOKENS.Settings`. */
export const SETTINGS_TABLE = 'system_settings';

/** How long values are cached; changes made through this service apply at once. */
const CACHE_MS = 2_000;

/** Typed settings over `system_settings`; also the kernel's `SettingsReader` (`TOKENS.Settings`). */
export class SettingsService implements SettingsReader {
  private cache: { values: Map<string, string>; at: number } | undefined;

  constructor(private readonly deps: CatalogDeps) {}

  private knex(): Knex {
    return this.deps.em().getKnex();
  }

  private async raw(): Promise<Map<string, string>> {
    if (this.cache && Date.now() - this.cache.at < CACHE_MS) return this.cache.values;
    const rows: Array<{ key: string; value: string }> = await this.knex()(SETTINGS_TABLE).select('key', 'value');
    const values = new Map(rows.map((row) => [row.key, row.value]));
    this.cache = { values, at: Date.now() };
    return values;
  }

  /** The value of a known key (stored, else its default); `undefined` for a key the catalog does not define. */
  async get<T = unknown>(key: string): Promise<T> {
    if (!(key in SETTING_DEFINITIONS)) return undefined as T;
    const typed = key as SettingKey;
    const stored = (await this.raw()).get(typed);
    const decoded = stored === undefined ? undefined : decodeSetting(typed, stored);
    if (stored !== undefined && decoded === undefined) {
      this.deps.logger.warn({ key }, 'stored setting is invalid; using its default');
    }
    return (decoded === undefined ? SETTING_DEFINITIONS[typed].default : decoded) as T;
  }

  async all(): Promise<SettingsValues> {
    const entries = await Promise.all(SETTING_KEYS.map(async (key) => [key, await this.get(key)] as const));
    return Object.fromEntries(entries) as SettingsValues;
  }

  /** Applies a validated partial update in one transaction. */
  async update(patch: Partial<SettingsValues>, actor: Actor): Promise<SettingsValues> {
    const keys = SETTING_KEYS.filter((key) => patch[key] !== undefined);
    const channels = patch['notifications.config'];
    if (channels) await this.assertChannelsExist([...channels.globalChannels, ...Object.values(channels.events).flatMap((e) => e.channels ?? [])]);
    // The value MikroORM itself would write for a date on this dialect.
    const now = this.deps.em().getPlatform().processDateProperty(new Date());
    await this.knex().transaction(async (trx) => {
      for (const key of keys) {
        const row = { key, value: encodeSetting(key, patch[key]), description: SETTING_DEFINITIONS[key].description, updated_at: now };
        await trx(SETTINGS_TABLE).insert(row).onConflict('key').merge(['value', 'description', 'updated_at']);
      }
    });
    this.cache = undefined;
    if (keys.length > 0) await this.deps.audit.record(actor, 'UPDATE', 'settings', null, { keys });
    return this.all();
  }

  private async assertChannelsExist(ids: string[]): Promise<void> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return;
    const found = await this.deps.em().find(AdapterConfigEntity, { id: { $in: unique }, type: 'notification' }, { fields: ['id'] });
    const missing = unique.filter((id) => !found.some((row) => row.id === id));
    if (missing.length > 0) throw new NotFoundError(`Notification channel(s) not found: ${missing.join(', ')}`);
  }
}
