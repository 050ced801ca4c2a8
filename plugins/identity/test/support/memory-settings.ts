import type { SettingsReader } from '@holdfast/kernel';

/** Stands in for the catalog's `TOKENS.Settings` in identity suites: values set by the test, read like stored text. */
export class MemorySettings implements SettingsReader {
  private readonly values = new Map<string, string>();

  set(key: string, value: string): void {
    this.values.set(key, value);
  }

  async get<T = unknown>(key: string): Promise<T> {
    return this.values.get(key) as T;
  }
}
