import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { freshBucket, removeBucket, rgw, rgwConfig } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { preset: 'aws', region: 'eu-central-1', bucket: 'my-backups', accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'example-secret' },
});

// A fresh bucket per check, on the real Ceph RADOS Gateway; every other check gets a key prefix inside it too, so
// both the bucket root and the prefix code paths run.
let checks = 0;
describeStorageAdapter<Record<string, unknown>>('storage-s3 against Ceph RADOS Gateway (real S3)', {
  definition,
  config: async () => {
    const state = await rgw();
    const bucket = await freshBucket(state);
    return rgwConfig(state, bucket, checks++ % 2 === 0 ? {} : { prefix: 'holdfast/host-1' });
  },
  badConfig: async () => ({ ...rgwConfig(await rgw(), 'holdfast-no-such-bucket'), secretAccessKey: 'wrong-secret-key' }),
  cleanup: async (config) => removeBucket(await rgw(), config.bucket as string),
});
