import type { SettingsReader } from '@holdfast/kernel';

/**
 * Identity's view of the system settings (rate limits, audit retention). The catalog owns the settings table and
 * registers `TOKENS.Settings`; identity only reads through that port, looked up on each read because the catalog
 * itself depends on identity's access policy. Without a settings provider every value is its default.
 */
export class IdentitySettings {
  constructor(private readonly source: () => SettingsReader | undefined) {}

  /** A positive integer setting; `fallback` when unset, not a positive integer, or no settings provider exists. */
  async getPositiveInt(key: string, fallback: number): Promise<number> {
    const reader = this.source();
    if (!reader) return fallback;
    const raw = await reader.get<unknown>(key);
    const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
    return Number.isInteger(value) && value > 0 ? value : fallback;
  }
}
