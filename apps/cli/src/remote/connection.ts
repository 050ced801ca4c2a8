import type { Command } from 'commander';
import { HoldfastClient } from '@holdfast/client';
import { UsageError } from './exit-codes.js';
import { readLogin } from './config-store.js';

/** The server a remote command talks to, and how: flags beat HOLDFAST_URL / HOLDFAST_API_KEY, which beat the login. */
export interface Target {
  url: string;
  apiKey?: string;
  session?: { cookie: string; csrfToken: string };
}

interface GlobalOptions {
  url?: string;
  apiKey?: string;
}

function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

/** Whether a remote server is configured at all (used by `keys` to choose between the API and the local database). */
export async function hasRemote(command: Command, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const options = globals(command);
  return Boolean(options.url || env.HOLDFAST_URL || (await readLogin(env))?.url);
}

export function normaliseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`"${text}" is not a URL; give the server address, e.g. https://backups.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the server URL must start with http:// or https:// (got "${text}")`);
  return url.toString().replace(/\/+$/, '');
}

export async function resolveTarget(command: Command, env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  const options = globals(command);
  const stored = await readLogin(env);
  const rawUrl = options.url || env.HOLDFAST_URL || stored?.url;
  if (!rawUrl) throw new UsageError('no server configured: run holdfast login <url>, or set HOLDFAST_URL and HOLDFAST_API_KEY');
  const url = normaliseUrl(rawUrl);
  const apiKey = options.apiKey || env.HOLDFAST_API_KEY;
  if (apiKey) return { url, apiKey };
  // The stored credential belongs to the stored URL only: never send it to another server.
  if (stored && normaliseUrl(stored.url) === url) {
    if (stored.apiKey) return { url, apiKey: stored.apiKey };
    if (stored.session) return { url, session: stored.session };
  }
  throw new UsageError(`no credential for ${url}: run holdfast login, or set HOLDFAST_API_KEY`);
}

/** A client for the command's target. */
export async function connect(command: Command): Promise<HoldfastClient> {
  const target = await resolveTarget(command);
  return new HoldfastClient({ baseUrl: target.url, apiKey: target.apiKey, session: target.session });
}
