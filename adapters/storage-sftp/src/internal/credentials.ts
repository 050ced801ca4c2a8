import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { SftpStorageConfig } from '../config.js';
import { SFTP_ORIGIN } from './errors.js';

/** The login the connection uses, after merging config and credential profile. */
export interface SftpLogin {
  username: string;
  password?: string;
  privateKey?: string;
  passphrase?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Merges the config with the `primary` credential profile (USERNAME_PASSWORD `{ username, password }` or SSH_KEY
 * `{ username, privateKey, passphrase }`). A field set in the config wins over the profile, field by field.
 */
export function resolveLogin(config: SftpStorageConfig, context: AdapterContext): SftpLogin {
  const profile = context.credentials?.primary ?? {};
  const login: SftpLogin = {
    username: text(config.username) ?? text(profile.username) ?? '',
    password: text(config.password) ?? text(profile.password),
    privateKey: text(config.privateKey) ?? text(profile.privateKey),
    passphrase: text(config.passphrase) ?? text(profile.passphrase),
  };
  if (!login.username) {
    throw new AdapterError(SFTP_ORIGIN, 'CONFIG', 'no username: set "username" or assign a credential profile with one');
  }
  if (!login.password && !login.privateKey) {
    throw new AdapterError(SFTP_ORIGIN, 'CONFIG', 'no password or private key: set one, or assign a credential profile');
  }
  return login;
}
