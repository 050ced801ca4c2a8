import type { MongoClient } from 'mongodb';
import { loadDriver } from './driver.js';
import { maskSecrets, type SshTarget } from '@holdfast/sdk';
import type { MongoSourceConfig } from '../config.js';
import { fromDriverError } from './errors.js';
import { openSshProxy } from './ssh-proxy.js';

/** Removes the password (raw and URL-encoded) from a text before it reaches a message or a log. */
export function scrubber(config: MongoSourceConfig): (text: string) => string {
  const secrets = [config.password, config.password && encodeURIComponent(config.password)];
  return (text) => maskSecrets(text, secrets);
}

/** The connection string with the credentials, for the driver and for the tools' 0600 config file only. */
export function uriWithCredentials(config: MongoSourceConfig): string {
  if (!config.username) return config.uri;
  const url = new URL(config.uri);
  url.username = encodeURIComponent(config.username);
  url.password = encodeURIComponent(config.password ?? '');
  if (!url.searchParams.has('authSource')) url.searchParams.set('authSource', config.authSource);
  return url.toString();
}

/** A connected client and what closes it: the client, and in SSH mode its tunnel after it. */
export interface Connection {
  client: MongoClient;
  close(): Promise<void>;
}

/**
 * Connects (server selection included) so an unreachable server or a wrong password fails here, named. In SSH mode
 * every connection of the driver goes through a SOCKS5 front of one SSH connection (see ssh-proxy.ts), closed with
 * the client.
 */
export async function connect(config: MongoSourceConfig, ssh?: SshTarget): Promise<Connection> {
  const timeout = config.connectTimeoutSeconds * 1000;
  const { MongoClient: DriverClient } = await loadDriver();
  const proxy = ssh ? await openSshProxy(ssh, timeout) : undefined;
  const client = new DriverClient(uriWithCredentials(config), {
    connectTimeoutMS: timeout,
    serverSelectionTimeoutMS: timeout,
    appName: 'holdfast',
    // Fidelity: documents are read and written as raw BSON where possible; nothing is promoted lossy.
    promoteLongs: false,
    promoteValues: true,
    ...proxy?.options,
  });
  const close = async () => {
    try {
      await client.close();
    } catch {
      // closing is best effort: the run's own error, if any, is the one to report
    } finally {
      await proxy?.close();
    }
  };
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
    return { client, close };
  } catch (error) {
    await close();
    throw fromDriverError(error, `cannot connect to ${hostsOf(config.uri)}${ssh ? ` over SSH via ${ssh.host}:${ssh.port}` : ''}`, scrubber(config));
  }
}

/** The host list of a connection string, for messages. */
export function hostsOf(uri: string): string {
  return uri.replace(/^mongodb(\+srv)?:\/\//, '').split('/')[0] ?? uri;
}

/** Server version and edition from `buildInfo`. */
export async function serverVersion(client: MongoClient): Promise<{ version: string; edition: string }> {
  const info = await client.db('admin').command({ buildInfo: 1 });
  const modules = (info.modules as string[] | undefined) ?? [];
  return { version: String(info.version), edition: modules.includes('enterprise') ? 'MongoDB Enterprise' : 'MongoDB Community' };
}

/** User databases (`listDatabases`), without the server's own local and config. */
export async function databaseNames(client: MongoClient): Promise<string[]> {
  const result = await client.db('admin').command({ listDatabases: 1, nameOnly: true });
  return (result.databases as { name: string }[]).map((db) => db.name).filter((name) => name !== 'local' && name !== 'config').sort();
}
