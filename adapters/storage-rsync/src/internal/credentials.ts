import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { RsyncStorageConfig } from '../config.js';
import { RSYNC_ORIGIN } from './errors.js';

/** The login after merging config and credential profile. */
export interface RsyncLogin {
  username: string;
  password?: string;
  privateKey?: string;
  passphrase?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Merges the config with the `primary` (or else `ssh`) credential profile (USERNAME_PASSWORD `{ username,
 * password }` or SSH_KEY `{ username, privateKey, passphrase }`). A config field wins over the profile, field by field.
 */
export function resolveLogin(config: RsyncStorageConfig, context: AdapterContext): RsyncLogin {
  const profile = context.credentials?.primary ?? context.credentials?.ssh ?? {};
  const login: RsyncLogin = {
    username: text(config.username) ?? text(profile.username) ?? '',
    password: text(config.password) ?? text(profile.password),
    privateKey: text(config.privateKey) ?? text(profile.privateKey),
    passphrase: text(config.passphrase) ?? text(profile.passphrase),
  };
  if (!login.username) {
    throw new AdapterError(RSYNC_ORIGIN, 'CONFIG', 'no username: set "username" or assign a credential profile with one');
  }
  if (config.mode === 'ssh' && !login.password && !login.privateKey) {
    throw new AdapterError(RSYNC_ORIGIN, 'CONFIG', 'no password or private key: set one, or assign a credential profile');
  }
  return login;
}
