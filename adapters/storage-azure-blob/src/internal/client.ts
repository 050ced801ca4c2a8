import type { BlobServiceClient, ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { AzureBlobStorageConfig } from '../config.js';
import { AZURE_ORIGIN, redact } from './errors.js';

/** The login after merging config and the `primary` credential profile. */
export type AzureLogin =
  | { kind: 'connection-string'; connectionString: string }
  | { kind: 'account-key'; accountName: string; accountKey: string; endpoint: string };

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * Merges the config with the `primary` credential profile: `{ connectionString }`, `{ accountName, accountKey }`,
 * or a USERNAME_PASSWORD profile read as `{ username: account name, password: account key }`. Config fields win.
 */
export function resolveLogin(config: AzureBlobStorageConfig, context: AdapterContext): AzureLogin {
  const profile = context.credentials?.primary ?? {};
  const connectionString = text(config.connectionString) ?? (config.accountKey ? undefined : text(profile.connectionString));
  if (connectionString) return { kind: 'connection-string', connectionString };
  const accountName = text(config.accountName) ?? text(profile.accountName) ?? text(profile.username);
  const accountKey = text(config.accountKey) ?? text(profile.accountKey) ?? text(profile.password);
  if (!accountName) {
    throw new AdapterError(AZURE_ORIGIN, 'CONFIG', 'no account: set "connectionString", or "accountName" with "accountKey", or assign a credential profile');
  }
  if (!accountKey) {
    throw new AdapterError(AZURE_ORIGIN, 'CONFIG', `no account key for "${accountName}": set "accountKey" or assign a credential profile`);
  }
  const endpoint = config.endpoint ?? `https://${accountName}.blob.core.windows.net`;
  return { kind: 'account-key', accountName, accountKey, endpoint };
}

/** Every secret the login holds, for scrubbing messages. */
export function secretsOf(login: AzureLogin): string[] {
  return login.kind === 'connection-string' ? [login.connectionString] : [login.accountKey];
}

/** Where the login points, for messages: the endpoint host and account, never a key. */
export function describeTarget(login: AzureLogin, container: string): string {
  if (login.kind === 'account-key') return `container "${container}" at ${login.endpoint.replace(/\/+$/, '')}`;
  const endpoint = /BlobEndpoint=([^;]+)/i.exec(login.connectionString)?.[1];
  const account = /AccountName=([^;]+)/i.exec(login.connectionString)?.[1];
  return `container "${container}" at ${endpoint ?? (account ? `account ${account}` : 'the connection string endpoint')}`;
}

/**
 * A container client; `maxTries` 1 for connection tests, so an unreachable host answers at once. The Azure SDK (about
 * 17 MiB in memory) is loaded by the first client, so a server without an Azure destination does not carry it.
 */
export async function containerClient(login: AzureLogin, container: string, maxTries: number): Promise<ContainerClient> {
  const { BlobServiceClient, StorageSharedKeyCredential } = await import('@azure/storage-blob');
  const options: StoragePipelineOptions = {
    retryOptions: { maxTries },
    userAgentOptions: { userAgentPrefix: 'holdfast' },
  };
  let service: BlobServiceClient;
  try {
    service =
      login.kind === 'connection-string'
        ? BlobServiceClient.fromConnectionString(login.connectionString, options)
        : new BlobServiceClient(login.endpoint, new StorageSharedKeyCredential(login.accountName, login.accountKey), options);
  } catch (error) {
    // A malformed connection string: the SDK names the part it could not read.
    const reason = redact((error as Error).message ?? String(error), secretsOf(login));
    throw new AdapterError(AZURE_ORIGIN, 'CONFIG', `invalid Azure credentials: ${reason}`);
  }
  return service.getContainerClient(container);
}
