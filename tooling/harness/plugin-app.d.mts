import type { CoreServices } from '@holdfast/boot';
import type { HoldfastPlugin } from '@holdfast/kernel';
import type { HoldfastDatabase } from '@holdfast/database';
import type { TestSite } from '@holdfast/tooling/harness/test-site';
import type { DependencyContainer } from 'tsyringe';

/** A running plugin app: its URL, its database, and `close()` (server, plugins in reverse, database, site). */
export interface PluginApp {
  url: string;
  db: HoldfastDatabase;
  close(): Promise<void>;
}

/**
 * Starts `plugins` in `container` on the site's database. `core` are the boot's core services (logger, runtime,
 * adapters; silent and empty by default); the container must already hold the other ports the plugins need.
 */
export function startPluginApp(options: { site: TestSite; container: DependencyContainer; plugins: HoldfastPlugin[]; core?: CoreServices }): Promise<PluginApp>;
