import { readFileSync } from 'node:fs';

/**
 * Secrets that may be given as a file instead of a value (`<NAME>_FILE`), as container secrets are mounted
 * (`/run/secrets/...`). The system key's `HOLDFAST_ENCRYPTION_KEY_FILE` is not here: the catalog plugin reads that
 * file itself and the server protects its path from adapters.
 */
export const FILE_VARIABLES = ['DATABASE_URL', 'HOLDFAST_ADMIN_PASSWORD', 'HOLDFAST_METRICS_TOKEN'] as const;

/**
 * Returns a copy of `env` where each `<NAME>_FILE` of FILE_VARIABLES has been read into `<NAME>` (one trailing
 * newline removed, as `echo` and editors add one). Setting both forms, or a file that cannot be read, is an error
 * naming the variable; the file's content never appears in a message.
 */
export function resolveFileVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const resolved: NodeJS.ProcessEnv = { ...env };
  for (const name of FILE_VARIABLES) {
    const path = env[`${name}_FILE`]?.trim();
    if (!path) continue;
    if (env[name]?.trim()) throw new Error(`set ${name} or ${name}_FILE, not both`);
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (error) {
      throw new Error(`${name}_FILE ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const value = content.replace(/\r?\n$/, '');
    if (!value.trim()) throw new Error(`${name}_FILE ${path} is empty`);
    resolved[name] = value;
    delete resolved[`${name}_FILE`];
  }
  return resolved;
}
