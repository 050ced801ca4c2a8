import { readFile } from 'node:fs/promises';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer, type FullServerOptions } from './full-server.js';

/** A full server with its admin signed in and the rate limits lifted: how a suite of many admin requests starts. */
export async function startAdminServer(dialect: 'sqlite' | 'postgresql', options?: FullServerOptions): Promise<{ server: FullServer; admin: Caller }> {
  const server = await startFullServer(dialect, options);
  const admin = await server.signIn(ADMIN.email, ADMIN.password);
  await liftRateLimits(server, admin);
  return { server, admin };
}

/** What a local test service (`/tmp/holdfast-test-services/<name>/<name>.json`) says of itself: host, port, users. */
export async function serviceState(name: string): Promise<any> {
  return JSON.parse(await readFile(`/tmp/holdfast-test-services/${name}/${name}.json`, 'utf8'));
}
