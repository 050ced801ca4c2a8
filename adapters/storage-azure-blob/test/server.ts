import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BlobServiceClient, StorageSharedKeyCredential, type ContainerClient } from '@azure/storage-blob';

/** What tooling/test-services/azurite.mjs wrote about the running Azurite. */
export interface AzuriteState {
  host: string;
  port: number;
  accountName: string;
  accountKey: string;
  blobEndpoint: string;
  connectionString: string;
}

const STATE_FILE = '/tmp/holdfast-test-services/azurite/azurite.json';

/** Reads the Azurite state file the global setup wrote. */
export async function azurite(): Promise<AzuriteState> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as AzuriteState;
  } catch (error) {
    throw new Error(`no Azurite state at ${STATE_FILE} (run node tooling/test-services/azurite.mjs): ${(error as Error).message}`);
  }
}

/** A client of the test account, to create containers and look behind the adapter's back. */
export function serviceOf(state: AzuriteState): BlobServiceClient {
  return new BlobServiceClient(state.blobEndpoint, new StorageSharedKeyCredential(state.accountName, state.accountKey));
}

/** A fresh, empty container per test. */
export async function freshContainer(state: AzuriteState): Promise<ContainerClient> {
  const container = serviceOf(state).getContainerClient(`holdfast-${randomBytes(6).toString('hex')}`);
  await container.create();
  return container;
}

/** Deletes a test container and everything in it. */
export async function removeContainer(state: AzuriteState, name: string): Promise<void> {
  await serviceOf(state).getContainerClient(name).deleteIfExists();
}

/** A working account-key config for `container`. */
export function keyConfig(state: AzuriteState, container: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { accountName: state.accountName, accountKey: state.accountKey, endpoint: state.blobEndpoint, container, ...extra };
}

/** Names of the committed blobs, and of all blobs including uncommitted ones, as the service sees them. */
export async function blobNames(container: ContainerClient): Promise<{ committed: string[]; all: string[] }> {
  const committed: string[] = [];
  for await (const item of container.listBlobsFlat()) committed.push(item.name);
  const all: string[] = [];
  for await (const item of container.listBlobsFlat({ includeUncommitedBlobs: true })) all.push(item.name);
  return { committed: committed.sort(), all: all.sort() };
}
