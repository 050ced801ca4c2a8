import { readFileSync } from 'node:fs';
import { SERVER_MANIFEST_PATH } from './discovery/index.js';

/** The release number of this server, from apps/server/package.json. */
export function serverVersion(): string {
  const manifest = JSON.parse(readFileSync(SERVER_MANIFEST_PATH, 'utf8')) as { version?: string };
  return manifest.version ?? '0.0.0';
}
