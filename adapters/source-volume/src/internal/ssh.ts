import { resolveSshTarget, type AdapterContext, type SshTarget } from '@holdfast/sdk';
import type { VolumeSourceConfig } from '../config.js';
import { ORIGIN, volumeError } from './errors.js';

/**
 * The SSH login of Docker over SSH, or undefined without `ssh`. The handshake timeout is the Engine API's
 * `timeoutSeconds`, and `tls` is refused beside `ssh`.
 */
export function resolveDockerSshTarget(config: VolumeSourceConfig, context: AdapterContext): SshTarget | undefined {
  const target = resolveSshTarget(ORIGIN, config, context, config.timeoutSeconds);
  // The SSH channel already encrypts and authenticates; TLS inside it would need the daemon's TCP port as well.
  if (target && config.tls) throw volumeError('CONFIG', 'tls cannot be combined with ssh: the SSH tunnel already protects the connection; turn tls off');
  return target;
}
