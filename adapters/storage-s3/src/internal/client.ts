import type { S3Client } from '@aws-sdk/client-s3';
import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { S3StorageConfig } from '../config.js';
import { resolveLogin, type S3Login } from './credentials.js';
import { S3_ORIGIN } from './errors.js';
import type { S3Sdk } from './sdk.js';
import { resolveEndpoint } from './presets.js';

/** A configured client plus what error messages need: where it points and which secrets to keep out of them. */
export interface S3Connection {
  client: S3Client;
  /** The SDK module the client came from, for its command classes (loaded on first use, see sdk.ts). */
  sdk: S3Sdk;
  bucket: string;
  /** Where requests go, for messages (`https://... bucket x`). */
  where: string;
  secrets: string[];
}

/** Builds the S3 client of a config. Throws AdapterError(CONFIG) when no credentials are available. */
export function createConnection(sdk: S3Sdk, config: S3StorageConfig, context: AdapterContext): S3Connection {
  const login: S3Login = resolveLogin(config, context);
  const resolved = resolveEndpoint({ ...config, region: config.region ?? login.region });
  if ('problems' in resolved) {
    throw new AdapterError(S3_ORIGIN, 'CONFIG', resolved.problems.map((problem) => `${problem.path}: ${problem.message}`).join('; '));
  }
  const client = new sdk.S3Client({
    endpoint: resolved.endpoint,
    region: resolved.region,
    forcePathStyle: resolved.forcePathStyle,
    credentials: { accessKeyId: login.accessKeyId, secretAccessKey: login.secretAccessKey, sessionToken: login.sessionToken },
    // Send flexible checksums only where S3 requires them: many S3-compatible servers (Ceph RGW before Reef, older
    // MinIO, B2) reject the aws-chunked trailer encoding. Parts carry Content-MD5 instead, which every server checks.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: {
      connectionTimeout: config.connectTimeoutSeconds * 1000,
      requestTimeout: config.requestTimeoutSeconds * 1000,
      // Enough sockets for every parallel part plus the metadata reads of a retention pass.
      httpAgent: { maxSockets: config.parallelParts + 8, keepAlive: true },
      httpsAgent: { maxSockets: config.parallelParts + 8, keepAlive: true },
    },
  });
  const where = `${resolved.endpoint ?? `AWS S3 ${resolved.region}`} bucket ${config.bucket}`;
  return { client, sdk, bucket: config.bucket, where, secrets: [login.secretAccessKey, login.sessionToken ?? ''] };
}
