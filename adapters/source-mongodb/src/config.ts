import { secret, secretTarget, sshBlockFields, sshLoginSecretFields, z } from '@holdfast/sdk';

/** The SSH host of SSH mode; the login secrets are top-level secret fields (see below). */
export const sshBlock = z.object({
  host: z.string().min(1).describe('SSH host from which the MongoDB server is reached (and where mongodump/mongorestore run in tools mode)'),
  ...sshBlockFields(),
});

/** Config of a MongoDB source: where the server is, how to log in, and which backup method is used. */
export const mongoSourceConfig = z.object({
  // The URI, the user, binDirectory and ssh say where the passwords go: a stored secret is reused only while they stay.
  uri: secretTarget(
    z
      .string()
      .trim()
      .regex(/^mongodb(\+srv)?:\/\//, 'expected a mongodb:// or mongodb+srv:// connection string')
      .refine((uri) => !/^mongodb(\+srv)?:\/\/[^/@]*:[^/@]*@/.test(uri), 'put the password in the password field, not in the URI')
      .describe('Connection string without credentials, e.g. mongodb://db1:27017,db2:27017/?replicaSet=rs0&tls=true (hosts as seen from the SSH host in SSH mode)'),
  ),
  username: secretTarget(z.string().min(1).optional().describe('User name (default: no authentication)')),
  password: secret(z.string().optional().describe('Password of the user')),
  authSource: z.string().min(1).default('admin').describe('Database the user is defined in'),
  database: z.string().min(1).optional().describe('Database backed up when a job names none (default: every database except local/config)'),
  method: z
    .enum(['auto', 'tools', 'driver'])
    .default('auto')
    .describe('auto: mongodump/mongorestore when found, else the driver export; tools: always the tools; driver: always the driver'),
  binDirectory: secretTarget(z.string().optional().describe('Directory holding mongodump and mongorestore (on the SSH host in SSH mode); default: PATH')),
  includeUsers: z.boolean().default(false).describe('Also back up and restore users and roles (needs the backup/restore roles)'),
  dropBeforeRestore: z.boolean().default(true).describe('Drop each collection before it is restored (like mongorestore --drop)'),
  batchSize: z.coerce.number().int().min(1).max(100_000).default(1000).describe('Documents per find batch and per insert batch (driver method)'),
  connectTimeoutSeconds: z.coerce.number().int().min(1).max(300).default(10).describe('Connect and server selection timeout in seconds (also the SSH handshake timeout)'),
  ssh: secretTarget(
    sshBlock.optional().describe('Reach the server through this SSH host: the driver over a port forward, mongodump/mongorestore run there'),
  ),
  ...sshLoginSecretFields,
});

/** Parsed config of {@link mongoSourceConfig}. */
export type MongoSourceConfig = z.output<typeof mongoSourceConfig>;
