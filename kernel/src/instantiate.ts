import type { DependencyContainer } from 'tsyringe';
import type { AdapterDefinition, AdapterKind } from './adapter-definition.js';
import type { AdapterContext } from './adapter-context.js';
import { AdapterError } from './errors.js';
import { silentLogger } from './logger.js';
import { TOKENS } from './tokens.js';
import type { z } from 'zod';

/** Formats zod issues as `path: message; ...` without echoing input values (which may be secrets). */
export function describeConfigIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * Builds one configured adapter instance in a child container that holds its parsed config and context.
 * Resolution is synchronous, so implementations connect lazily. Invalid config throws `AdapterError(CONFIG)`.
 */
export function instantiateAdapter<K extends AdapterKind, S extends z.ZodType, C extends object, I>(
  parent: DependencyContainer,
  definition: AdapterDefinition<K, S, C, I>,
  rawConfig: unknown,
  context: Partial<AdapterContext> = {},
): I {
  const parsed = definition.configSchema.safeParse(rawConfig ?? {});
  if (!parsed.success) {
    throw new AdapterError(definition, 'CONFIG', `invalid configuration: ${describeConfigIssues(parsed.error)}`);
  }
  const child = parent.createChildContainer();
  child.register(TOKENS.AdapterConfig, { useValue: parsed.data });
  // The host's local path rule reaches every instance, whichever plugin builds it.
  const localPaths = context.localPaths ?? (parent.isRegistered(TOKENS.LocalPathPolicy, true) ? parent.resolve(TOKENS.LocalPathPolicy) : undefined);
  child.register(TOKENS.AdapterContext, {
    useValue: { logger: silentLogger, ...context, ...(localPaths ? { localPaths } : {}) } satisfies AdapterContext,
  });
  return child.resolve(definition.implementation as never) as I;
}
