import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes a community adapter package into a plugin dir: a plain branded object importing nothing of Holdfast,
 * the layout docs/operations.md describes. `overrides` replace fields of the definition to make it bad.
 */
export async function writeCommunityPackage(
  pluginDir: string,
  options: { name: string; version: string; kind: string; id: string; overrides?: Record<string, unknown> },
): Promise<string> {
  const directory = join(pluginDir, options.name);
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'package.json'),
    JSON.stringify({
      name: options.name,
      version: options.version,
      type: 'module',
      main: './index.js',
      holdfast: { kind: options.kind, id: options.id },
    }),
  );
  await writeFile(
    join(directory, 'index.js'),
    `class CommunityImplementation {}
export default {
  brand: 'holdfast.adapter',
  apiVersion: 1,
  kind: ${JSON.stringify(options.kind)},
  id: ${JSON.stringify(options.id)},
  displayName: 'Community adapter',
  configSchema: { safeParse: (value) => ({ success: true, data: value }) },
  capabilities: {},
  implementation: CommunityImplementation,
  ...${JSON.stringify(options.overrides ?? {})},
};
`,
  );
  return directory;
}
