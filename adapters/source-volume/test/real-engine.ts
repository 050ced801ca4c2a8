import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import { silentLogger } from '@holdfast/sdk';
import { volumeSourceConfig } from '../src/config.js';
import { createHelper, MOUNT_PATH, removeHelper } from '../src/internal/docker.js';
import { EngineApi } from '../src/internal/engine-api.js';

/**
 * The opt-in real Engine: DOCKER_HOST (unix:///var/run/docker.sock or tcp://host:port), and for TLS the usual
 * DOCKER_TLS_VERIFY=1 with DOCKER_CERT_PATH holding ca.pem, cert.pem and key.pem.
 */
export function realEngineConfig(volume: string): Record<string, unknown> {
  const host = process.env.DOCKER_HOST!;
  const tls = process.env.DOCKER_TLS_VERIFY === '1';
  const certs = process.env.DOCKER_CERT_PATH ?? '';
  const read = (name: string) => readFileSync(join(certs, name), 'utf8');
  return {
    dockerHost: host,
    volume,
    helperImage: process.env.HOLDFAST_TEST_DOCKER_IMAGE ?? 'alpine:3',
    ...(tls ? { tls: true, tlsCa: read('ca.pem'), tlsCert: read('cert.pem'), tlsKey: read('key.pem') } : {}),
  };
}

export function realEngineApi(): EngineApi {
  return new EngineApi(volumeSourceConfig.parse(realEngineConfig('unused')));
}

/** Creates a volume on the real Engine and fills it through a helper container (independent of the adapter's dump). */
export async function seedRealVolume(api: EngineApi, volume: string, content: Readable): Promise<void> {
  await api.json('POST', '/volumes/create', { Name: volume });
  const helper = await createHelper(api, process.env.HOLDFAST_TEST_DOCKER_IMAGE ?? 'alpine:3', volume, false, silentLogger);
  try {
    await api.upload('PUT', `/containers/${helper}/archive?path=${MOUNT_PATH}`, content, AbortSignal.timeout(60_000));
  } finally {
    await removeHelper(api, helper);
  }
}

/** Member name (without the top folder) -> sha256 of the volume's archive, read through a helper container. */
export async function digestRealVolume(api: EngineApi, volume: string): Promise<Record<string, string>> {
  const helper = await createHelper(api, process.env.HOLDFAST_TEST_DOCKER_IMAGE ?? 'alpine:3', volume, true, silentLogger);
  try {
    return await digestTar(await api.stream('GET', `/containers/${helper}/archive?path=${MOUNT_PATH}`, AbortSignal.timeout(60_000)));
  } finally {
    await removeHelper(api, helper);
  }
}

export async function removeRealVolume(api: EngineApi, volume: string): Promise<void> {
  await api.json('DELETE', `/volumes/${volume}?force=true`, undefined, { accept: [404] });
}

/** Member name (without the top folder) -> type and sha256 of its content. */
export async function digestTar(stream: Readable): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const extract = tar.extract();
  stream.pipe(extract);
  for await (const entry of extract) {
    const hash = createHash('sha256');
    for await (const chunk of entry) hash.update(chunk as Buffer);
    const name = entry.header.name.replace(/^[^/]+\/?/, '');
    if (name) out[name] = `${entry.header.type}:${entry.header.linkname ?? ''}:${hash.digest('hex')}`;
  }
  return out;
}
