import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { FakeDockerEngine } from './fake-docker.js';
import { volumeSource } from './helpers.js';

/** A throwaway CA with a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
function makeCertificates(): Record<'ca' | 'serverKey' | 'serverCert' | 'clientKey' | 'clientCert', string> {
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-docker-tls-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=holdfast test CA');
  for (const [name, subject, ext] of [
    ['server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1'],
    ['client', '/CN=holdfast', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.ext`);
  }
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  const out = { ca: read('ca.pem'), serverKey: read('server.key'), serverCert: read('server.pem'), clientKey: read('client.key'), clientCert: read('client.pem') };
  rmSync(dir, { recursive: true, force: true });
  return out;
}

const certs = makeCertificates();
// The labelled fake Docker Engine API, here listening on TCP with TLS and client certificates required.
const fake = await FakeDockerEngine.start({ tls: { key: certs.serverKey, cert: certs.serverCert, ca: certs.ca } });
afterAll(() => fake.stop());

describe('source-volume over tcp:// with TLS against a fake Docker Engine API', () => {
  it('talks to the Engine with the CA and the client certificate', async () => {
    const source = volumeSource({ dockerHost: `tcp://127.0.0.1:${fake.tcpPort}`, volume: 'v', tls: true, tlsCa: certs.ca, tlsCert: certs.clientCert, tlsKey: certs.clientKey });
    expect(await source.detectVersion()).toEqual({ version: '24.0.7-fake', edition: 'Docker Engine (API 1.43)' });
    expect(fake.calls.map((call) => `${call.method} ${call.path}`)).toEqual(['GET /version']);
  });

  it('fails without the client certificate, naming the endpoint and never the key', async () => {
    const source = volumeSource({ dockerHost: `tcp://127.0.0.1:${fake.tcpPort}`, volume: 'v', tls: true, tlsCa: certs.ca });
    const error = await source.dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
    expect((error as Error).message).toMatch(/^\[source-volume\] cannot reach the Docker Engine at tcp:\/\/127\.0\.0\.1:\d+: /);
    const wrongCa = volumeSource({ dockerHost: `tcp://127.0.0.1:${fake.tcpPort}`, volume: 'v', tls: true, tlsCert: certs.clientCert, tlsKey: certs.clientKey });
    const untrusted = await wrongCa.check();
    expect(untrusted.ok).toBe(false);
    expect(untrusted.message).toContain(`tcp://127.0.0.1:${fake.tcpPort}: TLS handshake failed`);
    expect(untrusted.message).not.toContain(certs.clientKey.split('\n')[1]!);
    expect(fake.calls).toHaveLength(1);
  });
});
