import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdapterError, isAdapterError, silentLogger } from '@holdfast/sdk';
import { S3Storage } from '../src/s3-storage.js';
import { s3StorageConfig } from '../src/config.js';
import { archivedObjectError, isArchivedObjectError } from '../src/internal/archived.js';
import { toAdapterError } from '../src/internal/errors.js';

// Ceph RGW 16.2 has no archive tiers (it answers InvalidArgument for StorageClass GLACIER), so it cannot produce
// InvalidObjectState. These tests use the mapping directly and a FAKE S3 endpoint that answers exactly what AWS
// documents for a GetObject of an unrestored GLACIER / DEEP_ARCHIVE object: 403 with an InvalidObjectState XML body.
const SECRET = 'fake-secret-access-key-do-not-leak';

/** The SDK's error object for InvalidObjectState, shaped as @aws-sdk/client-s3 3.x builds it. */
function sdkInvalidObjectState(storageClass: string): Error {
  return Object.assign(new Error('The operation is not valid for the object\'s storage class'), {
    name: 'InvalidObjectState',
    Code: 'InvalidObjectState',
    StorageClass: storageClass,
    $metadata: { httpStatusCode: 403 },
  });
}

describe('archived objects: error mapping (unit)', () => {
  it('recognises InvalidObjectState and explains how to restore', () => {
    const error = sdkInvalidObjectState('GLACIER');
    expect(isArchivedObjectError(error)).toBe(true);
    expect(isArchivedObjectError(Object.assign(new Error('x'), { name: 'AccessDenied' }))).toBe(false);
    const mapped = archivedObjectError({ bucket: 'b', objectKey: 'root/a.tar', key: 'a.tar' }, {}, error);
    expect(mapped).toBeInstanceOf(AdapterError);
    expect(mapped.code).toBe('CONFIG');
    expect(mapped.message).toMatch(/^\[storage-s3\] object "a\.tar" is archived in storage class GLACIER and cannot be read until it is restored/);
    expect(mapped.message).toContain('aws s3api restore-object --bucket b --key root/a.tar');
  });

  it('says so when a restore is already running, and names DEEP_ARCHIVE waits', () => {
    const ongoing = archivedObjectError({ bucket: 'b', objectKey: 'k', key: 'k' }, { storageClass: 'DEEP_ARCHIVE', restore: 'ongoing-request="true"' });
    expect(ongoing.message).toContain('DEEP_ARCHIVE');
    expect(ongoing.message).toContain('already in progress');
    const waiting = archivedObjectError({ bucket: 'b', objectKey: 'k', key: 'k' }, { storageClass: 'DEEP_ARCHIVE' });
    expect(waiting.message).toContain('48 hours');
  });

  it('maps SDK errors to stable codes without leaking a secret from a library message', () => {
    const withSecret = Object.assign(new Error(`signature mismatch for ${SECRET}`), { name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    const mapped = toAdapterError(withSecret, 'put failed', [SECRET]);
    expect(mapped.code).toBe('AUTH');
    expect(mapped.message).not.toContain(SECRET);
    expect(mapped.message).toContain('secret access key is wrong');
    expect(toAdapterError(Object.assign(new Error('x'), { name: 'NoSuchBucket', $metadata: { httpStatusCode: 404 } }), 'w').code).toBe('NOT_FOUND');
    expect(toAdapterError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'w').code).toBe('TRANSIENT');
    expect(toAdapterError(Object.assign(new Error('x'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } }), 'w').code).toBe('TRANSIENT');
    expect(toAdapterError(Object.assign(new Error('aborted'), { name: 'AbortError' }), 'w').code).toBe('ABORTED');
    expect(toAdapterError(Object.assign(new Error('UnknownError'), { name: 'UnknownError', $metadata: { httpStatusCode: 403 } }), 'w').code).toBe('AUTH');
  });
});

describe('archived objects through get() against a FAKE S3 endpoint (documented AWS answers)', () => {
  let server: Server;
  let endpoint: string;
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      const storageClass = request.url?.includes('deep') ? 'DEEP_ARCHIVE' : 'GLACIER';
      if (request.method === 'HEAD') {
        const headers: Record<string, string> = { 'content-length': '1000', 'x-amz-storage-class': storageClass, etag: '"abc"', 'last-modified': new Date().toUTCString() };
        if (storageClass === 'DEEP_ARCHIVE') headers['x-amz-restore'] = 'ongoing-request="true"';
        response.writeHead(200, headers).end();
        return;
      }
      response
        .writeHead(403, { 'content-type': 'application/xml' })
        .end(
          `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidObjectState</Code><Message>The operation is not valid for the object's storage class</Message><StorageClass>${storageClass}</StorageClass><RequestId>R1</RequestId><HostId>H1</HostId></Error>`,
        );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  const storage = (prefix = '') =>
    new S3Storage(s3StorageConfig.parse({ preset: 'custom', endpoint, bucket: 'vault', prefix, accessKeyId: 'AKIAFAKE', secretAccessKey: SECRET }), { logger: silentLogger });

  it('get() of an unrestored GLACIER object throws a descriptive CONFIG error, not a stream (fake)', async () => {
    const adapter = storage('backups');
    const error = await adapter.get('2026/db.dump').then(
      () => undefined,
      (failure: unknown) => failure,
    );
    await adapter.dispose();
    expect(isAdapterError(error)).toBe(true);
    expect((error as AdapterError).code).toBe('CONFIG');
    expect((error as AdapterError).message).toContain('object "2026/db.dump" is archived in storage class GLACIER');
    expect((error as AdapterError).message).toContain('restore-object --bucket vault --key backups/2026/db.dump');
    expect((error as AdapterError).message).not.toContain(SECRET);
    expect(requests).toContain('GET /vault/backups/2026/db.dump?x-id=GetObject');
  });

  it('get() of a DEEP_ARCHIVE object under restore says the restore is in progress (fake)', async () => {
    const adapter = storage();
    const error = (await adapter.get('deep.tar').catch((failure: unknown) => failure)) as AdapterError;
    await adapter.dispose();
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('DEEP_ARCHIVE');
    expect(error.message).toContain('A restore of it is already in progress');
  });
});
