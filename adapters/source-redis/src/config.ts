import { secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** The SSH host of SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z.object({
  host: z.string().min(1).describe('SSH host from which the Redis server is reached (and where redis-cli runs in rdb mode)'),
  ...sshBlockFields(),
});

/** Connection settings of a Redis or Valkey server and the backup mode. */
export const redisSourceConfig = z.object({
  // host, port, binDirectory and ssh say where the passwords go: a stored secret is reused only while they stay.
  host: secretTarget(z.string().min(1).default('127.0.0.1').describe('Server host name or address (as seen from the SSH host in SSH mode)')),
  port: secretTarget(z.coerce.number().int().min(1).max(65535).default(6379).describe('Server port')),
  username: z.string().min(1).optional().describe('ACL user name (Redis 6+); empty for the default user'),
  password: secret(z.string().optional().describe('Password of the ACL user or the requirepass password')),
  tls: z.boolean().default(false).describe('Connect with TLS'),
  tlsRejectUnauthorized: z.boolean().default(true).describe('With TLS, refuse servers whose certificate does not verify'),
  database: z.coerce.number().int().min(0).max(1023).default(0).describe('Database index backed up when a job names none (logical mode)'),
  mode: z
    .enum(['logical', 'rdb'])
    .default('logical')
    .describe('logical: SCAN + DUMP + PTTL per key, restored by Holdfast; rdb: a whole-server RDB snapshot through redis-cli --rdb'),
  scanCount: z.coerce.number().int().min(10).max(100_000).default(1000).describe('SCAN COUNT hint and pipeline batch size of the logical mode'),
  binDirectory: secretTarget(z.string().optional().describe('Directory holding redis-cli (rdb mode; on the SSH host in SSH mode); default: PATH')),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds (also the SSH handshake timeout)'),
  ssh: secretTarget(
    sshBlock.optional().describe('Reach the server through this SSH host: a port forward (logical mode), redis-cli run there (rdb mode)'),
  ),
  ...sshLoginSecretFields,
});

/** Parsed config of the Redis source. */
export type RedisSourceConfig = z.output<typeof redisSourceConfig>;
