import { describe, expect, it } from 'vitest';
import { silentLogger, secretFieldsOf } from '@holdfast/sdk';
import { s3StorageConfig } from '../src/config.js';
import { resolveLogin } from '../src/internal/credentials.js';
import { resolveEndpoint } from '../src/internal/presets.js';

const keys = { accessKeyId: 'AKIA1', secretAccessKey: 'secret-1' };

describe('storage-s3 config and presets', () => {
  it('applies defaults: 8 MiB parts, 8 in parallel, 64 MiB maximum, aws preset', () => {
    const config = s3StorageConfig.parse({ bucket: 'b', ...keys });
    expect(config).toMatchObject({ preset: 'aws', partSizeMiB: 8, parallelParts: 8, maxPartSizeMiB: 64, prefix: '' });
  });

  it('fills each preset\'s endpoint, region and path style; explicit fields win', () => {
    expect(resolveEndpoint({ preset: 'aws' })).toEqual({ endpoint: undefined, region: 'us-east-1', forcePathStyle: false });
    expect(resolveEndpoint({ preset: 'r2', accountId: 'abc123' })).toEqual({ endpoint: 'https://abc123.r2.cloudflarestorage.com', region: 'auto', forcePathStyle: true });
    expect(resolveEndpoint({ preset: 'b2', region: 'us-west-004' })).toEqual({ endpoint: 'https://s3.us-west-004.backblazeb2.com', region: 'us-west-004', forcePathStyle: false });
    expect(resolveEndpoint({ preset: 'wasabi', region: 'eu-central-1' })).toMatchObject({ endpoint: 'https://s3.eu-central-1.wasabisys.com' });
    expect(resolveEndpoint({ preset: 'hetzner' })).toEqual({ endpoint: 'https://fsn1.your-objectstorage.com', region: 'fsn1', forcePathStyle: false });
    expect(resolveEndpoint({ preset: 'minio', endpoint: 'http://minio.lan:9000' })).toEqual({ endpoint: 'http://minio.lan:9000', region: 'us-east-1', forcePathStyle: true });
    expect(resolveEndpoint({ preset: 'wasabi', endpoint: 'https://s3.example', forcePathStyle: true })).toMatchObject({ endpoint: 'https://s3.example', forcePathStyle: true });
  });

  it('rejects at parse time what a preset needs but lacks, naming the field', () => {
    const issues = (input: object) => s3StorageConfig.safeParse({ bucket: 'b', ...keys, ...input }).error?.issues.map((issue) => issue.path.join('.')) ?? [];
    expect(issues({ preset: 'r2' })).toContain('accountId');
    expect(issues({ preset: 'b2' })).toContain('region');
    expect(issues({ preset: 'minio' })).toContain('endpoint');
    expect(issues({ preset: 'custom' })).toContain('endpoint');
    expect(issues({ partSizeMiB: 4 })).toContain('partSizeMiB');
    expect(issues({ partSizeMiB: 65 })).toContain('partSizeMiB');
    expect(issues({ parallelParts: 33 })).toContain('parallelParts');
    expect(issues({ partSizeMiB: 16, maxPartSizeMiB: 8 })).toContain('maxPartSizeMiB');
    expect(issues({ prefix: '/abs' })).toContain('prefix');
    expect(issues({ prefix: 'a/../b' })).toContain('prefix');
    expect(issues({ accessKeyId: 'only-id', secretAccessKey: undefined })).toContain('secretAccessKey');
    expect(issues({ endpoint: 'ftp://x' })).toContain('endpoint');
  });

  it('marks the secret key and session token as secrets', () => {
    expect(secretFieldsOf(s3StorageConfig).sort()).toEqual(['secretAccessKey', 'sessionToken']);
  });

  it('takes the key pair from the config, else from the ACCESS_KEY profile, never mixed', () => {
    const profile = { type: 'ACCESS_KEY', accessKeyId: 'PROFILE-ID', secretAccessKey: 'profile-secret', region: 'eu-west-1' };
    const fromConfig = resolveLogin(s3StorageConfig.parse({ bucket: 'b', ...keys }), { logger: silentLogger, credentials: { primary: profile } });
    expect(fromConfig).toMatchObject({ accessKeyId: 'AKIA1', secretAccessKey: 'secret-1' });
    const fromProfile = resolveLogin(s3StorageConfig.parse({ bucket: 'b' }), { logger: silentLogger, credentials: { primary: profile } });
    expect(fromProfile).toEqual({ accessKeyId: 'PROFILE-ID', secretAccessKey: 'profile-secret', region: 'eu-west-1', sessionToken: undefined });
    expect(() => resolveLogin(s3StorageConfig.parse({ bucket: 'b' }), { logger: silentLogger })).toThrow(/\[storage-s3\] no access key/);
  });
});
