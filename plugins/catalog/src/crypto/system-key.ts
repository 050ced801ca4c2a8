import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { KernelLogger } from '@holdfast/kernel';

/** File name of the generated system key inside the data directory. */
export const SYSTEM_KEY_FILE = 'system.key';

/** Where the key came from, for the start-up log line. */
export type SystemKeySource = 'env' | 'file' | 'generated' | 'data-dir';

/** A loaded system key. */
export interface SystemKey {
  key: Buffer;
  source: SystemKeySource;
  /** The file read or written, when the key came from one. */
  path?: string;
}

/**
 * Parses a key given as 64 hex characters or base64 of exactly 32 bytes. The error never quotes the text: it is
 * the key itself.
 */
export function parseKeyText(text: string, origin: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const decoded = Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
    if (decoded.length === 32) return decoded;
  }
  throw new Error(`${origin} must hold a 32-byte key as 64 hex characters or base64 (its length or characters are wrong)`);
}

/**
 * Loads the system encryption key (ARCHITECTURE 7): `HOLDFAST_ENCRYPTION_KEY`, else the file named by
 * `HOLDFAST_ENCRYPTION_KEY_FILE`, else `<dataDir>/system.key`, generated (mode 0600) on the first start.
 * Synchronous on purpose: it runs once, while the container resolves the first service that needs it.
 */
export function loadSystemKey(env: NodeJS.ProcessEnv, dataDir: string, logger: KernelLogger): SystemKey {
  const inline = env.HOLDFAST_ENCRYPTION_KEY;
  if (inline && inline.trim()) return { key: parseKeyText(inline, 'HOLDFAST_ENCRYPTION_KEY'), source: 'env' };
  const keyFile = env.HOLDFAST_ENCRYPTION_KEY_FILE;
  if (keyFile && keyFile.trim()) {
    const path = resolve(keyFile.trim());
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new Error(`HOLDFAST_ENCRYPTION_KEY_FILE ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    return { key: parseKeyText(text, `The key file ${path}`), source: 'file', path };
  }
  const path = join(resolve(dataDir), SYSTEM_KEY_FILE);
  if (existsSync(path)) return { key: parseKeyText(readFileSync(path, 'utf8'), `The key file ${path}`), source: 'data-dir', path };
  // 0700: the data directory is private to the server user (it holds this key and the embedded database).
  mkdirSync(resolve(dataDir), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // `wx` refuses to overwrite a key another process wrote a moment ago.
  writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  logger.warn(
    { path },
    `Generated a new system encryption key at ${path}; back it up: without it stored secrets cannot be decrypted`,
  );
  return { key, source: 'generated', path };
}
