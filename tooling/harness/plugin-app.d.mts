import type { HoldfastPlugin } from '@holdfast/kernel';
import type { HoldfastDatabase } from '@holdfast/persistence';
import type { TestSite } from '@holdfast/tooling/harness/test-site';
import type { DependencyContainer } from 'tsyringe';

/** A running plugin app: its URL, its database, and `close()` (server, plugins in reverse, database, site). */
export interface PluginApp {
  url: string;
  db: HoldfastDatabase;
  close(): Promise<void>;
}

/** Starts `plugins` in `container` on the site's database; the container must already hold the ports they need. */
export function startPluginApp(options: { site: TestSite; container: DependencyContainer; plugins: HoldfastPlugin[] }): Promise<PluginApp>;
