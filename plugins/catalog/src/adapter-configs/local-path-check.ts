import { LocalPathRefusedError, TOKENS, ValidationError, type AnyAdapterDefinition } from '@holdfast/kernel';
import { localPathFieldsOf } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';

/**
 * Checks every local path field of a validated config against the host's local path policy (symlinks resolved), so
 * a destination at the data directory (or `/`) is refused when saved or tested with a 400 naming the field. The
 * adapters check again before each use: a path allowed today may be a symlink to somewhere else tomorrow.
 */
export async function checkLocalPaths(
  container: DependencyContainer,
  definition: AnyAdapterDefinition,
  config: Record<string, unknown>,
): Promise<void> {
  const fields = localPathFieldsOf(definition.configSchema);
  if (fields.length === 0 || !container.isRegistered(TOKENS.LocalPathPolicy, true)) return;
  const policy = container.resolve(TOKENS.LocalPathPolicy);
  const problems: Array<{ path: string; message: string }> = [];
  for (const { field, use } of fields) {
    const value = config[field];
    const entries = Array.isArray(value) ? value.map((item, index) => [`${field}.${index}`, item] as const) : [[field, value] as const];
    for (const [path, item] of entries) {
      if (typeof item !== 'string') continue;
      try {
        await policy.check(item, use);
      } catch (error) {
        if (!(error instanceof LocalPathRefusedError) && (error as Error)?.name !== 'LocalPathRefusedError') throw error;
        problems.push({ path: `body.config.${path}`, message: (error as Error).message });
      }
    }
  }
  if (problems.length > 0) {
    throw new ValidationError(`Invalid request: ${problems.map((p) => `${p.path.slice(5)}: ${p.message}`).join('; ')}`, problems);
  }
}
