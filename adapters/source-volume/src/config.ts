import { secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** The SSH host whose Docker socket is used; the login secrets are top-level secret fields (below). */
export const sshBlock = z.object({
  host: z.string().trim().min(1).describe('SSH host that runs the Docker Engine'),
  ...sshBlockFields('Docker over SSH'),
});

/** Config of a Docker volume source: which Engine API to talk to, which volume, and how it is read. */
export const volumeSourceConfig = z.object({
  // The endpoint says where the TLS key goes: a stored secret is reused only while it stays the same.
  dockerHost: secretTarget(
    z
      .string()
      .trim()
      .regex(/^(unix:\/\/\/|tcp:\/\/|\/)/, 'expected unix:///path/to/docker.sock, /path/to/docker.sock or tcp://host:port')
      .default('unix:///var/run/docker.sock')
      .describe('Docker Engine API endpoint: unix:///var/run/docker.sock (default), a socket path, or tcp://host:2375; with ssh, as seen on the SSH host'),
  ),
  ssh: secretTarget(sshBlock.optional().describe('Reach the Docker socket of this host through an SSH tunnel (like DOCKER_HOST=ssh://...)')),
  ...sshLoginSecretFields,
  volume: z
    .string()
    .trim()
    .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/, 'not a valid Docker volume name')
    .describe('Name of the Docker volume backed up when a job names none'),
  helperImage: z
    .string()
    .trim()
    .min(1)
    .default('alpine:3')
    .describe('Image of the short-lived helper container the volume is mounted into (pulled when missing)'),
  stopContainers: z
    .boolean()
    .default(false)
    .describe('Stop the running containers that use the volume while it is read or restored, and start them again afterwards'),
  apiVersion: z
    .string()
    .regex(/^1\.\d+$/, 'expected an API version like 1.43')
    .default('1.43')
    .describe('Engine API version used in request paths (1.43 = Docker 24 and later)'),
  tls: z.boolean().default(false).describe('Use TLS on a tcp:// endpoint (Docker daemon with --tlsverify, usually port 2376)'),
  tlsCa: secret(z.string().optional().describe('PEM CA certificate the daemon certificate must chain to (TLS)')),
  tlsCert: secret(z.string().optional().describe('PEM client certificate (TLS client authentication)')),
  tlsKey: secret(z.string().optional().describe('PEM private key of the client certificate')),
  tlsRejectUnauthorized: z.boolean().default(true).describe('With TLS, refuse a daemon whose certificate does not verify'),
  timeoutSeconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(600)
    .default(30)
    .describe('Timeout in seconds of each Engine API call that is not a tar stream (connect, create, stop, start)'),
});

/** Parsed config of {@link volumeSourceConfig}. */
export type VolumeSourceConfig = z.output<typeof volumeSourceConfig>;
