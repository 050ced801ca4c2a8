import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { S3StorageConfig } from '../config.js';
import { S3_ORIGIN } from './errors.js';

/** The keys requests are signed with, after merging config and credential profile. */
export interface S3Login {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Region named by the profile; used when the config sets none. */
  region?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The config's key pair when it has one, else the `primary` ACCESS_KEY credential profile
 * (`{ accessKeyId, secretAccessKey, sessionToken?, region? }`). The pair is taken from one place, never mixed, so a
 * key id is never signed with another key's secret. No fallback to the AWS SDK's environment/instance credentials:
 * a backup server should not pick up whatever keys its host happens to have.
 */
export function resolveLogin(config: S3StorageConfig, context: AdapterContext): S3Login {
  if (config.accessKeyId && config.secretAccessKey) {
    return { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey, sessionToken: text(config.sessionToken) };
  }
  const profile = context.credentials?.primary ?? {};
  const accessKeyId = text(profile.accessKeyId);
  const secretAccessKey = text(profile.secretAccessKey);
  if (!accessKeyId || !secretAccessKey) {
    throw new AdapterError(
      S3_ORIGIN,
      'CONFIG',
      'no access key: set accessKeyId and secretAccessKey, or assign an ACCESS_KEY credential profile',
    );
  }
  return { accessKeyId, secretAccessKey, sessionToken: text(profile.sessionToken), region: text(profile.region) };
}
