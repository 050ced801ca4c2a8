import type { AnyAdapterDefinition, HoldfastPlugin } from '@holdfast/kernel';
import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';

/** A server composed for a test. */
export interface ComposedServer {
  url: string;
  container: DependencyContainer;
  close(): Promise<void>;
}

/** See compose.mjs. */
export function composeServer(options: {
  dataDir: string;
  databaseUrl?: string;
  plugins: HoldfastPlugin[];
  logger: Logger;
  adapters?: AnyAdapterDefinition[];
}): Promise<ComposedServer>;
