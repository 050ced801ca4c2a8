// Issue 45.4, identity side: the guard of protected actions and the step-up routes with passkeys and backup codes
// (TOTP codes and the API-key option are covered through the assembled server, apps/server/test/protected-deletion).
import { defineRoute, resolveOptional, runProtectedAction, TOKENS, type HoldfastEvents, type ProtectedActionGuard, type RouteDefinition } from '@holdfast/kernel';
import { awayFromStepBoundary, secretOfUri, stepAt, totpForStep } from '@holdfast/tooling/harness/rfc6238';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';
import { SoftwareAuthenticator } from './support/software-authenticator.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

const WINDOW_MS = 2_000;

describe.each(DIALECTS)('step-up for protected actions on %s', (dialect) => {
  /** Counts how often the stand-in protected action really ran. */
  let ran = 0;
  const events: Array<HoldfastEvents['protected_action']> = [];

  async function start() {
    ran = 0;
    events.length = 0;
    db = await openDatabase(dialect);
    let guardOf: () => ProtectedActionGuard | undefined = () => undefined;
    // A stand-in for the storage browser's delete route: the same kernel helper and port.
    const routes: RouteDefinition[] = [
      defineRoute({
        method: 'POST',
        path: '/api/test/protected',
        summary: 'A protected stand-in action',
        tags: ['test'],
        access: {},
        request: { body: z.strictObject({}) },
        responses: { 200: { description: 'Done.' } },
        handler: (request) =>
          runProtectedAction(guardOf(), request, { kind: 'backup.delete', resource: 'storage', resourceId: 'dest-1', details: { file: 'x.sql.gz' } }, async () => {
            ran += 1;
            return { ok: true };
          }),
      }),
    ];
    app = await startIdentityApp(db, { routes, config: { stepUpWindowMs: WINDOW_MS } });
    const container = app.container;
    guardOf = () => resolveOptional(container, TOKENS.ProtectedActions);
    app.events.on('protected_action', (event) => void events.push(event));
    return app;
  }

  const act = (client: Client) => client.call('POST', '/api/test/protected', { json: {} });

  async function registerPasskey(client: Client) {
    const authenticator = new SoftwareAuthenticator({ origin: app!.url });
    const options = await client.call('POST', '/api/auth/passkeys/registration-options', { json: {} });
    const created = await client.call('POST', '/api/auth/passkeys', { json: { response: authenticator.create(options.body) } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return authenticator;
  }

  it('a user without a second factor acts as before (proof "none", audited and announced); with a passkey, only after a passkey step-up', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    expect((await act(admin)).status).toBe(200);
    expect(ran).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events.map((event) => [event.action, event.proof, event.via])).toEqual([['backup.delete', 'none', 'session']]);

    const authenticator = await registerPasskey(admin);
    const refused = await act(admin);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/fresh second factor.*POST \/api\/auth\/step-up/);
    expect(refused.body.error).toContain('or a passkey');
    expect(refused.body.details).toEqual({ code: 'SECOND_FACTOR_REQUIRED', action: 'backup.delete', stepUp: '/api/auth/step-up', methods: ['passkey'] });
    expect(ran).toBe(1);
    // TOTP is not on: a code is refused (409), nothing becomes fresh.
    expect((await admin.call('POST', '/api/auth/step-up', { json: { code: '123456' } })).status).toBe(409);
    expect((await admin.call('POST', '/api/auth/step-up', { json: {} })).status).toBe(400);

    const options = await admin.call('POST', '/api/auth/step-up/passkey-options', { json: {} });
    expect(options.status).toBe(200);
    expect(options.body.allowCredentials.map((c: { id: string }) => c.id)).toEqual([authenticator.id]);
    const stepped = await admin.call('POST', '/api/auth/step-up', { json: { passkey: authenticator.get(options.body) } });
    expect(stepped.status, JSON.stringify(stepped.body)).toBe(200);
    expect(stepped.body).toMatchObject({ isFresh: true, methods: ['passkey'], windowSeconds: 2 });
    expect((await act(admin)).status).toBe(200);
    expect(ran).toBe(2);
    // The same assertion again: its challenge is used up.
    expect((await admin.call('POST', '/api/auth/step-up', { json: { passkey: authenticator.get(options.body) } })).status).toBe(403);

    // The window passes: refused again.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 200));
    expect((await act(admin)).status).toBe(403);
    expect(ran).toBe(2);

    // A passwordless passkey sign-in is itself a fresh second factor.
    const browser = new Client(app!.url);
    const signInOptions = await browser.call('POST', '/api/auth/passkeys/sign-in/options', { json: {} });
    expect((await browser.call('POST', '/api/auth/passkeys/sign-in', { json: { response: authenticator.get(signInOptions.body) } })).status).toBe(200);
    expect((await act(browser)).status).toBe(200);
    expect(ran).toBe(3);

    const entries = (await app!.services.audit.list({ page: 1, pageSize: 50, resource: 'storage' })).entries;
    const proofs = entries.filter((entry) => entry.action === 'protected-action').map((entry) => JSON.parse(entry.details!).proof);
    expect(proofs.sort()).toEqual(['none', 'passkey', 'passkey']);
    expect(entries.filter((entry) => entry.action === 'protected-action.refused')).toHaveLength(2);
  });

  it('a backup code steps up once; a wrong one and a reused one are refused and change nothing', async () => {
    await start();
    const admin = await setUpAdmin(app!);
    const started = await admin.call('POST', '/api/auth/two-factor/enroll', { json: {} });
    const secret = secretOfUri(started.body.otpauthUri);
    await awayFromStepBoundary();
    const confirmed = await admin.call('POST', '/api/auth/two-factor/confirm', { json: { code: totpForStep(secret, stepAt()) } });
    const [backupCode] = confirmed.body.backupCodes as string[];

    expect((await act(admin)).body.details.methods).toEqual(['totp']);
    const wrong = await admin.call('POST', '/api/auth/step-up', { json: { backupCode: 'aaaaa-aaaaa' } });
    expect(wrong.status).toBe(403);
    expect((await admin.call('GET', '/api/auth/step-up')).body.isFresh).toBe(false);
    expect((await act(admin)).status).toBe(403);

    expect((await admin.call('POST', '/api/auth/step-up', { json: { backupCode } })).status).toBe(200);
    expect((await act(admin)).status).toBe(200);
    expect(ran).toBe(1);
    expect((await admin.call('POST', '/api/auth/step-up', { json: { backupCode } })).status).toBe(403);
    // A wrong inline code is refused as well, and the action does not run.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 200));
    const inline = await admin.call('POST', '/api/test/protected', { json: {}, headers: { 'x-holdfast-second-factor': '000000' === totpForStep(secret, stepAt()) ? '111111' : '000000' } });
    expect(inline.status).toBe(403);
    expect(inline.body.error).toMatch(/x-holdfast-second-factor header is not correct/);
    expect(ran).toBe(1);
    const failed = (await app!.services.audit.list({ page: 1, pageSize: 50, action: 'step-up.failed' })).entries;
    expect(failed.length).toBeGreaterThanOrEqual(2);
  });
});
