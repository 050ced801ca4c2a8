import { secret, z } from '@holdfast/sdk';

/** Connection settings of a Redis or Valkey server and the backup mode. */
export const redisSourceConfig = z.object({
  host: z.string().min(1).default('127.0.0.1').describe('Server host name or address'),
  port: z.coerce.number().int().min(1).max(65535).default(6379).describe('Server port'),
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
  binDirectory: z.string().optional().describe('Directory holding redis-cli (rdb mode); default: found on PATH'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect timeout in seconds'),
});

/** Parsed config of the Redis source. */
export type RedisSourceConfig = z.output<typeof redisSourceConfig>;
