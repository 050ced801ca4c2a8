import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repository root and the tools the generated packages are built and tested with. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const PACKAGE_ROOT = fileURLToPath(new URL('../', import.meta.url));
export const BIN = `${PACKAGE_ROOT}dist/main.js`;
export const TSC = `${REPO_ROOT}node_modules/typescript/bin/tsc`;
export const VITEST = `${REPO_ROOT}node_modules/vitest/vitest.mjs`;

/** Result of a child process that ran to completion (any exit code). */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const CLI_BIN = `${REPO_ROOT}apps/cli/bin/holdfast.mjs`;
export const SERVER_MAIN = `${REPO_ROOT}apps/server/dist/main.js`;

// A child vitest must not believe it is one of our workers, and a child npm must not inherit the settings of the
// `npm test` that started us (npm_config_* would point it at this repository's workspaces).
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(VITEST|__VITEST|TEST$|NODE_OPTIONS$|npm_|INIT_CWD$)/i.test(key)) env[key] = value;
  }
  return env;
}

/** Runs `node <args>` and resolves with its exit code and output; rejects only when it cannot start or times out. */
export function runNode(args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return runCommand(process.execPath, args, options);
}

/** Runs `command <args>` (e.g. npm) like {@link runNode}. */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: childEnv(), timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(new Error(`${command} ${args.join(' ')} failed to run: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** Fails with the build command to run when a package the generated adapters import has no dist/ yet. */
export function requireBuilt(relativeDirs: string[]): void {
  const missing = relativeDirs.filter((dir) => !existsSync(`${REPO_ROOT}${dir}/dist/index.js`));
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} not built: run "npx turbo run build --filter=@holdfast/create-adapter..." first`,
    );
  }
}
