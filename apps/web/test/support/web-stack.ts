import { tmpdir } from 'node:os';
import { startServer, type ServerHandle } from '@holdfast/server';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, WEB_ROOT } from './browser.js';
import { signInCaller, type SessionCaller } from './sessions.js';

/** What an e2e file drives: the server with the built web app, Chromium, and the first administrator's session. */
export interface WebStack {
  server: ServerHandle;
  browser: Browser;
  admin: SessionCaller;
}

/**
 * The assembled server on a fresh embedded database in `dataDir`, serving the built web app, with its first
 * administrator made from the environment (as `npm start` does) and signed in, and Chromium launched. Local paths
 * below the temp folder are allowed, for the files and destinations the tests make there.
 */
export async function startWebStack(options: { dataDir: string; chromiumPath: string; admin: { email: string; password: string } }): Promise<WebStack> {
  const server = await startServer({
    env: {
      PORT: '0',
      HOLDFAST_DATA_DIR: options.dataDir,
      HOLDFAST_LOCAL_ROOTS: tmpdir(),
      HOLDFAST_WEB_DIR: WEB_ROOT,
      LOG_LEVEL: 'silent',
      HOLDFAST_ADMIN_EMAIL: options.admin.email,
      HOLDFAST_ADMIN_PASSWORD: options.admin.password,
    },
    host: '127.0.0.1',
  });
  const browser = await chromium.launch({ executablePath: options.chromiumPath, args: CHROMIUM_ARGS });
  const admin = await signInCaller(server.url, options.admin.email, options.admin.password);
  return { server, browser, admin };
}
