import { resolveSshTarget, type AdapterContext, type SshTarget } from '@holdfast/sdk';
import type { MssqlSourceConfig } from '../config.js';
import { ORIGIN } from './origin.js';

/**
 * The SSH login used to fetch and upload `.bak` files, or undefined in shared-directory mode. Unlike the other
 * sources, `ssh.host` may be left out (the SQL Server host is the SSH host then) and the handshake timeout is the
 * block's own `ssh.connectTimeoutSeconds` (`connectTimeoutSeconds` is the TDS connect timeout).
 */
export function resolveBackupSshTarget(config: MssqlSourceConfig, context: AdapterContext): SshTarget | undefined {
  const ssh = config.ssh && { ...config.ssh, host: config.ssh.host ?? config.host };
  return resolveSshTarget(ORIGIN, { ...config, ssh }, context, config.ssh?.connectTimeoutSeconds);
}
