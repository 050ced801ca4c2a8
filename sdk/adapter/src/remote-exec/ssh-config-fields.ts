import { z } from 'zod';
import { secret } from '@holdfast/kernel/adapter';

/**
 * `port`, `username` and the pinned `hostKeySha256` of a source adapter's `ssh` block, to spread after its own
 * `host` (whose description says what runs there). `readmeSection` names the README section with the first-use
 * flow of the host key.
 */
export function sshBlockFields(readmeSection = 'SSH mode') {
  return {
    port: z.coerce.number().int().min(1).max(65535).default(22).describe('SSH port'),
    username: z.string().optional().describe('SSH login; default: the username of the credential profile assigned under the role "ssh"'),
    hostKeySha256: z
      .string()
      .regex(/^SHA256:[A-Za-z0-9+/]{43}=?$/, 'expected an OpenSSH fingerprint like SHA256:AbC...')
      .describe(`Pinned OpenSSH SHA256 fingerprint of the host key (see "${readmeSection}" in the README for the first-use flow)`),
  };
}

/**
 * The SSH login secrets, top-level fields beside the `ssh` block (so they are stored sealed and reused only while
 * the block, a secret target, stays the same). Each falls back to the credential profile under the role `ssh`.
 */
export const sshLoginSecretFields = {
  sshPassword: secret(z.string().optional().describe('SSH password (default: from the "ssh" credential profile)')),
  sshPrivateKey: secret(z.string().optional().describe('SSH private key in OpenSSH/PEM format (default: from the "ssh" credential profile)')),
  sshPassphrase: secret(z.string().optional().describe('Passphrase of the SSH private key')),
};
