// The catalog's CLI commands on real data directories: config export -> import into a fresh installation, and
// secrets rotate-key, each checked through the API of a server started on the result.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const ADMIN = { email: 'ops@example.test', password: 'ops password long' };

let workDir: string;
const spawned: SpawnedProcess[] = [];
/** A webhook receiver recording the Authorization header of every request: proves the stored secret decrypts. */
let receiver: { url: string; authorizations: string[]; close(): Promise<void> };

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'holdfast-cli-catalog-'));
  const authorizations: string[] = [];
  const server = createServer((request, response) => {
    authorizations.push(String(request.headers.authorization));
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
});

afterEach(async () => {
  await receiver.close();
  for (const process of spawned.splice(0)) {
    if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
  }
  await rm(workDir, { recursive: true, force: true });
});

function holdfast(dataDir: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): SpawnedProcess {
  const process = spawnNode(CLI, args, {
    PATH: globalThis.process.env.PATH,
    HOLDFAST_DATA_DIR: dataDir,
    PORT: '0',
    HOLDFAST_ADMIN_EMAIL: ADMIN.email,
    HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
    ...extraEnv,
  });
  spawned.push(process);
  return process;
}

async function run(dataDir: string, args: string[], extraEnv?: NodeJS.ProcessEnv) {
  const process = holdfast(dataDir, args, extraEnv);
  const { code } = await process.exited;
  return { code, stdout: process.stdoutLines.join('\n'), stderr: process.stderr() };
}

/** Starts `holdfast serve` on a data dir, signs in (with `totp` as second factor when the account has one), runs
 * `work` with an API caller, and stops the server. */
async function withServer<T>(
  dataDir: string,
  work: (api: (method: string, path: string, body?: unknown) => Promise<any>) => Promise<T>,
  totp?: TOTP,
): Promise<T> {
  const server = holdfast(dataDir, ['serve']);
  const { port } = (await server.waitForLog('holdfast listening', 30_000)) as { port: number };
  const base = `http://127.0.0.1:${port}`;
  const post = (path: string, body: unknown, cookie?: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });
  let signIn = await post('/api/auth/sign-in', ADMIN);
  expect(signIn.status).toBe(200);
  let answer = (await signIn.json()) as { csrfToken?: string; twoFactorRequired?: boolean };
  if (answer.twoFactorRequired) {
    expect(totp, 'the account asks for a second factor').toBeDefined();
    const pending = signIn.headers.get('set-cookie')!.split(';')[0]!;
    // The next step's code: inside the one-step window, and never a replay of the step used before.
    signIn = await post('/api/auth/two-factor/verify', { code: totp!.generate({ timestamp: Date.now() + 30_000 }) }, pending);
    answer = (await signIn.json()) as { csrfToken?: string };
    expect(signIn.status, JSON.stringify(answer)).toBe(200);
  }
  const csrfToken = answer.csrfToken!;
  const cookie = signIn.headers.getSetCookie().find((line) => !line.startsWith('holdfast_2fa='))!.split(';')[0]!;
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { cookie, 'x-csrf-token': csrfToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json().catch(() => undefined) };
  };
  try {
    return await work(api);
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

describe('holdfast config export / import', () => {
  it('moves the catalog, secrets included, into a fresh installation through an encrypted export', async () => {
    const source = join(workDir, 'source');
    const target = join(workDir, 'target');
    const profileKey = randomBytes(32).toString('hex');
    const secretHeader = `Bearer ${randomBytes(12).toString('hex')}`;
    const ids = await withServer(source, async (api) => {
      const vault = await api('POST', '/api/vault', { name: 'transfer key', key: profileKey });
      expect(vault.status).toBe(201);
      const hook = await api('POST', '/api/adapters', {
        name: 'ops webhook',
        type: 'notification',
        adapterId: 'generic-webhook',
        config: { webhookUrl: receiver.url, authHeader: secretHeader },
      });
      expect(hook.status).toBe(201);
      const policy = await api('POST', '/api/retention-policies', { name: 'Ten days', config: { mode: 'gfs', daily: 10 } });
      expect(policy.status).toBe(201);
      return { vault: vault.body.id as string };
    });

    const exportFile = join(workDir, 'catalog.json');
    const exported = await run(source, ['config', 'export', '--encryption-profile', ids.vault, '--out', exportFile]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const text = await readFile(exportFile, 'utf8');
    expect(text).not.toContain(secretHeader);
    expect(text).toContain('ops webhook');

    const keyFile = join(workDir, 'profile.key');
    await writeFile(keyFile, profileKey);
    await run(target, ['migrate']);
    const imported = await run(target, ['config', 'import', '--file', exportFile, '--key-file', keyFile]);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);

    await withServer(target, async (api) => {
      const hooks = (await api('GET', '/api/adapters?type=notification')).body as Array<{ name: string; config: Record<string, unknown>; secretStatus: Record<string, boolean> }>;
      const hook = hooks.find((h) => h.name === 'ops webhook')! as { id?: string; config: Record<string, unknown>; secretStatus: Record<string, boolean> };
      expect(hook.config.webhookUrl).toBe(receiver.url);
      expect(hook.secretStatus.authHeader).toBe(true);
      // The imported secret is the original one: a channel test sends it.
      const test = await api('POST', '/api/adapters/test-connection', { id: hook.id });
      expect(test.body).toMatchObject({ success: true });
      expect(receiver.authorizations.at(-1)).toBe(secretHeader);
      const policies = (await api('GET', '/api/retention-policies')).body as Array<{ name: string; config: unknown }>;
      expect(policies.find((p) => p.name === 'Ten days')?.config).toEqual({ mode: 'gfs', daily: 10 });
    });

    // Importing the same document again without --merge refuses the name conflicts and changes nothing.
    const again = await run(target, ['config', 'import', '--file', exportFile, '--key-file', keyFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^holdfast: .*(conflict|exist)/i);
  });
});

describe('holdfast secrets rotate-key', () => {
  it('re-encrypts stored secrets under a new key, identity\'s too; the server then starts with the new key only', async () => {
    const dataDir = join(workDir, 'data');
    let totp: TOTP | undefined;
    await withServer(dataDir, async (api) => {
      const hook = await api('POST', '/api/adapters', {
        name: 'rotating webhook',
        type: 'notification',
        adapterId: 'generic-webhook',
        config: { webhookUrl: receiver.url, authHeader: 'Bearer before-rotation' },
      });
      expect(hook.status).toBe(201);
      // Identity's sealed values: an SSO provider's client id and secret, and the administrator's TOTP secret.
      const provider = await api('POST', '/api/sso/providers', {
        providerId: 'corp', type: 'oidc', name: 'Corp', issuer: 'https://idp.example.test', clientId: 'holdfast-client', clientSecret: 'client secret',
      });
      expect(provider.status, JSON.stringify(provider.body)).toBe(201);
      const enrollment = await api('POST', '/api/auth/two-factor/enroll', {});
      expect(enrollment.status).toBe(200);
      totp = new TOTP({ secret: Secret.fromBase32(String(enrollment.body.manualKey).replace(/\s+/g, '')), digits: 6, period: 30, algorithm: 'SHA1' });
      expect((await api('POST', '/api/auth/two-factor/confirm', { code: totp.generate() })).status).toBe(200);
    });
    const oldKey = (await readFile(join(dataDir, 'system.key'), 'utf8')).trim();
    const newKeyFile = join(workDir, 'new.key');
    const newKey = randomBytes(32).toString('hex');
    await writeFile(newKeyFile, newKey);

    const rotated = await run(dataDir, ['secrets', 'rotate-key', '--new-key-file', newKeyFile]);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/Re-encrypted 1 adapter secret/);
    // TOTP secret + backup codes of one user, client id + secret of one provider.
    expect(rotated.stdout).toMatch(/and 4 two-factor and single sign-on secret\(s\)/);
    expect((await readFile(join(dataDir, 'system.key'), 'utf8')).trim()).toBe(newKey);

    await withServer(dataDir, async (api) => {
      const hooks = (await api('GET', '/api/adapters?type=notification')).body as Array<{ id: string; name: string; secretStatus: Record<string, boolean> }>;
      const hook = hooks.find((h) => h.name === 'rotating webhook')!;
      expect(hook.secretStatus.authHeader).toBe(true);
      const test = await api('POST', '/api/adapters/test-connection', { id: hook.id });
      expect(test.body).toMatchObject({ success: true });
      expect(receiver.authorizations.at(-1)).toBe('Bearer before-rotation');
      // Signing in above took a TOTP code, so the TOTP secret opened under the new key; the client id opens too.
      const providers = await api('GET', '/api/sso/providers');
      expect(JSON.stringify(providers.body)).toContain('holdfast-client');
    }, totp);
    const withOldKey = holdfast(dataDir, ['serve'], { HOLDFAST_ENCRYPTION_KEY: oldKey });
    const { code } = await withOldKey.exited;
    expect(code).not.toBe(0);
    expect(withOldKey.stderr()).toMatch(/system encryption key does not match/);
  });
});
