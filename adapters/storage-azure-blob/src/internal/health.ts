import { randomBytes } from 'node:crypto';
import type { ContainerClient, ContainerGetPropertiesResponse } from '@azure/storage-blob';

/**
 * Proves the login may read, list and write the container without leaving anything: it reads the container's
 * properties (it exists, the key is right), lists one blob below the root, and stages one 8-byte block on a random
 * blob name that is never committed. An uncommitted block is invisible to reads and listings and the service
 * discards it after 7 days, so nothing permanent is written (this matters on immutable containers). Returns the
 * container's properties (they say whether it supports version-level immutability).
 */
export async function probeContainer(container: ContainerClient, root: string): Promise<ContainerGetPropertiesResponse> {
  const properties = await container.getProperties();
  await container.listBlobsFlat({ prefix: root }).byPage({ maxPageSize: 1 }).next();
  const probe = container.getBlockBlobClient(`${root}.holdfast-check-${randomBytes(8).toString('hex')}`);
  const blockId = Buffer.from('holdfast-check-0').toString('base64');
  await probe.stageBlock(blockId, Buffer.from('holdfast'), 8);
  return properties;
}
