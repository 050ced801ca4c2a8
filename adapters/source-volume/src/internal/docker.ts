import type { KernelLogger } from '@holdfast/sdk';
import type { EngineApi } from './engine-api.js';
import { volumeError } from './errors.js';

/** Where the volume is mounted inside the helper container. */
export const MOUNT_PATH = '/volume';
/** Label set on every helper container, so a leftover one can be found and removed by hand. */
export const HELPER_LABEL = 'io.holdfast.helper';

/** Engine version as `GET /version` reports it. */
export async function engineVersion(api: EngineApi): Promise<{ version: string; apiVersion: string }> {
  const { body } = await api.json<{ Version?: string; ApiVersion?: string }>('GET', '/version');
  if (!body.Version) throw volumeError('TRANSIENT', 'GET /version gave no Version: is this a Docker Engine?');
  return { version: body.Version, apiVersion: body.ApiVersion ?? '' };
}

/** Names of all volumes (`GET /volumes`). */
export async function volumeNames(api: EngineApi): Promise<string[]> {
  const { body } = await api.json<{ Volumes?: { Name: string }[] | null }>('GET', '/volumes');
  return (body.Volumes ?? []).map((volume) => volume.Name).sort();
}

/** True when the volume exists (`GET /volumes/{name}`: 200 or 404). */
export async function volumeExists(api: EngineApi, name: string): Promise<boolean> {
  const { status } = await api.json('GET', `/volumes/${encodeURIComponent(name)}`, undefined, { accept: [404] });
  return status !== 404;
}

/** Creates a volume (`POST /volumes/create`) with the local driver. */
export async function createVolume(api: EngineApi, name: string): Promise<void> {
  await api.json('POST', '/volumes/create', { Name: name, Labels: { 'io.holdfast.restored': 'true' } });
}

/**
 * Creates (never starts) a helper container with the volume mounted: the archive endpoints work on a created
 * container, so nothing runs inside it. A missing helper image is pulled once (`POST /images/create`).
 */
export async function createHelper(api: EngineApi, image: string, volume: string, readOnly: boolean, logger: KernelLogger): Promise<string> {
  const body = {
    Image: image,
    Cmd: ['true'],
    Labels: { [HELPER_LABEL]: 'true' },
    NetworkDisabled: true,
    HostConfig: { Mounts: [{ Type: 'volume', Source: volume, Target: MOUNT_PATH, ReadOnly: readOnly }] },
  };
  const create = () => api.json<{ Id: string; message?: string }>('POST', '/containers/create', body, { accept: [404] });
  let created = await create();
  if (created.status === 404) {
    logger.info({ image }, 'pulling the helper image');
    await pullImage(api, image);
    created = await create();
    if (created.status === 404) throw volumeError('CONFIG', `helper image ${image} is missing after the pull`);
  }
  return created.body.Id;
}

async function pullImage(api: EngineApi, image: string): Promise<void> {
  const at = image.lastIndexOf(':');
  const [name, tag] = at > image.lastIndexOf('/') ? [image.slice(0, at), image.slice(at + 1)] : [image, 'latest'];
  const { body } = await api.json<string>('POST', `/images/create?fromImage=${encodeURIComponent(name)}&tag=${encodeURIComponent(tag)}`, undefined, {
    signal: AbortSignal.timeout(10 * 60_000),
  });
  // The pull answers 200 and reports failures inside its JSON progress stream.
  const failure = String(body)
    .split('\n')
    .map((line) => {
      try {
        return (JSON.parse(line) as { error?: string }).error;
      } catch {
        return undefined;
      }
    })
    .find(Boolean);
  if (failure) throw volumeError('CONFIG', `cannot pull helper image ${image}: ${failure}`);
}

/** Removes a helper container (`DELETE /containers/{id}?force=true`); a container already gone is fine. */
export async function removeHelper(api: EngineApi, id: string): Promise<void> {
  await api.json('DELETE', `/containers/${id}?force=true&v=false`, undefined, { accept: [404] });
}

/** Ids of the running containers that mount the volume (`GET /containers/json` with a volume filter). */
export async function runningUsers(api: EngineApi, volume: string): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ volume: [volume] }));
  const { body } = await api.json<{ Id: string; State?: string }[]>('GET', `/containers/json?filters=${filters}`);
  // Without all=true the list holds running containers only; State is checked too for older engines.
  return body.filter((container) => !container.State || container.State === 'running').map((container) => container.Id);
}

/** Stops containers one by one (204 stopped, 304 already stopped); returns the ones this call stopped. */
export async function stopContainers(api: EngineApi, ids: string[], stopped: string[]): Promise<void> {
  for (const id of ids) {
    // The stop itself waits up to `t` seconds for a clean shutdown; the HTTP call must outlast it.
    const { status } = await api.json('POST', `/containers/${id}/stop?t=30`, undefined, { accept: [304], signal: AbortSignal.timeout(90_000) });
    if (status !== 304) stopped.push(id);
  }
}

/** Starts containers again; every one is tried even when another fails, and failures are returned. */
export async function startContainers(api: EngineApi, ids: string[]): Promise<string[]> {
  const failures: string[] = [];
  for (const id of ids) {
    try {
      await api.json('POST', `/containers/${id}/start`, undefined, { accept: [304] });
    } catch (error) {
      failures.push(`${id.slice(0, 12)}: ${(error as Error).message}`);
    }
  }
  return failures;
}
