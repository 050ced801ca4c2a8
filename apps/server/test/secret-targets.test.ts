// Regression tests of issue 10.2 through the assembled server (libsql) and real receivers on loopback: a caller who
// may edit or test a config must not get its stored secret sent to a host of their choosing. The PostgreSQL receiver
// speaks just enough of the wire protocol to ask for a cleartext password (what a hostile server would do).
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const STORED_PASSWORD = 'LEAK-stored-pg-password-91ab';
const STORED_AUTH = 'Bearer LEAK-stored-webhook-auth-27cd';
const STORED_HEADER = 'LEAK-stored-custom-header-55ef';
const STORED_TOKEN = 'LEAK-stored-url-token-83aa';

/** A hostile "PostgreSQL server": answers every startup with AuthenticationCleartextPassword and records the reply. */
async function startPasswordCatcher(): Promise<{ port: number; passwords: string[]; close(): Promise<void> }> {
  const passwords: string[] = [];
  const server: TcpServer = createTcpServer((socket) => {
    let buffer = Buffer.alloc(0);
    let isStarted = false;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!isStarted && buffer.length >= 8) {
        const length = buffer.readInt32BE(0);
        const code = buffer.readInt32BE(4);
        if (buffer.length < length) return;
        buffer = buffer.subarray(length);
        if (code === 80877103) return void socket.write('N'); // SSLRequest: no TLS here
        isStarted = true;
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])); // 'R' cleartext password request
      }
      if (isStarted && buffer.length >= 5 && buffer[0] === 0x70) {
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) return;
        passwords.push(buffer.subarray(5, length).toString('utf8').replace(/\0$/, ''));
        socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    passwords,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Hit {
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

async function startHookReceiver(): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const server: HttpServer = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      hits.push({ url: request.url ?? '', headers: request.headers });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('regression (issue 10.2): stored secrets go only where they were saved for', () => {
  let server: FullServer;
  let admin: Caller;
  let catcher: Awaited<ReturnType<typeof startPasswordCatcher>>;
  let saved: Awaited<ReturnType<typeof startHookReceiver>>;
  let evil: Awaited<ReturnType<typeof startHookReceiver>>;

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    [catcher, saved, evil] = await Promise.all([startPasswordCatcher(), startHookReceiver(), startHookReceiver()]);
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all([catcher?.close(), saved?.close(), evil?.close()]);
  });

  const keyWith = async (permissions: string[]): Promise<Caller> => {
    const issued = await server.call('POST', '/api/api-keys', admin, { name: `key ${permissions.join(' ')}`, permissions });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    return { bearer: issued.body.key ?? issued.body.rawKey };
  };

  it('a connection test of a stored PostgreSQL source with another host or port gets 400 and the new host no password', async () => {
    const source = await server.call('POST', '/api/adapters', admin, {
      name: 'prod db',
      type: 'database',
      adapterId: 'postgres',
      config: { host: '127.0.0.1', port: 5432, user: 'root', password: STORED_PASSWORD },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const writer = await keyWith(['sources:write']);
    const redirected = await server.call('POST', '/api/adapters/test-connection', writer, {
      id: source.body.id,
      config: { host: '127.0.0.1', port: catcher.port, user: 'root', sslMode: 'disable' },
    });
    expect(redirected.status, JSON.stringify(redirected.body)).toBe(400);
    expect(redirected.body.error).toMatch(/config\.password.*port changed/);
    // The same through an update: refused, and nothing stored changed.
    const updated = await server.call('PUT', `/api/adapters/${source.body.id}`, writer, {
      config: { host: 'localhost', user: 'root' },
    });
    expect(updated.status).toBe(400);
    expect(updated.body.error).toContain('config.password');
    expect((await server.call('GET', `/api/adapters/${source.body.id}`, admin)).body.config.host).toBe('127.0.0.1');
    // A password the caller supplies does go there: the receiver is real and would have caught the stored one.
    const supplied = await server.call('POST', '/api/adapters/test-connection', writer, {
      id: source.body.id,
      config: { host: '127.0.0.1', port: catcher.port, user: 'root', sslMode: 'disable', password: 'typed-again' },
    });
    expect(supplied.status, JSON.stringify(supplied.body)).toBe(200);
    expect(catcher.passwords).toEqual(['typed-again']);
    // Unchanged target fields still reuse the stored password (a rename keeps working without retyping it).
    const renamed = await server.call('PUT', `/api/adapters/${source.body.id}`, writer, { name: 'prod db (renamed)', config: { host: '127.0.0.1', port: 5432, user: 'root' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.secretStatus).toEqual({ password: true, sshPassword: false, sshPrivateKey: false, sshPassphrase: false });
  });

  it('a webhook whose URL changes needs its Authorization and custom headers again; the new URL receives nothing', async () => {
    const hook = await server.call('POST', '/api/adapters', admin, {
      name: 'ops hook',
      type: 'notification',
      adapterId: 'generic-webhook',
      config: { webhookUrl: `${saved.url}/hook`, authHeader: STORED_AUTH, customHeaders: `X-Api-Key: ${STORED_HEADER}` },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    // Custom headers are secrets now: never shown, only reported as stored.
    expect(JSON.stringify(hook.body)).not.toContain(STORED_HEADER);
    expect(hook.body.secretStatus).toMatchObject({ authHeader: true, customHeaders: true });
    const writer = await keyWith(['notifications:write']);
    const tested = await server.call('POST', '/api/adapters/test-connection', writer, { id: hook.body.id, config: { webhookUrl: `${evil.url}/steal` } });
    expect(tested.status, JSON.stringify(tested.body)).toBe(400);
    expect(tested.body.error).toContain('config.authHeader');
    expect(tested.body.error).toContain('config.customHeaders');
    const moved = await server.call('PUT', `/api/adapters/${hook.body.id}`, writer, { config: { webhookUrl: `${evil.url}/steal` } });
    expect(moved.status).toBe(400);
    expect(evil.hits).toEqual([]);
    // The saved URL still gets them (the rule does not break the ordinary test).
    const ordinary = await server.call('POST', '/api/adapters/test-connection', writer, { id: hook.body.id });
    expect(ordinary.body.success, JSON.stringify(ordinary.body)).toBe(true);
    expect(saved.hits.at(-1)?.headers.authorization).toBe(STORED_AUTH);
    expect(saved.hits.at(-1)?.headers['x-api-key']).toBe(STORED_HEADER);
  });

  it('a token in a webhook URL is stored sealed, shown redacted, and reused only for the same address', async () => {
    const hook = await server.call('POST', '/api/adapters', admin, {
      name: 'token hook',
      type: 'notification',
      adapterId: 'generic-webhook',
      config: { webhookUrl: `${saved.url}/t?token=${STORED_TOKEN}&room=ops` },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    expect(JSON.stringify(hook.body)).not.toContain(STORED_TOKEN);
    expect(hook.body.config.webhookUrl).toBe(`${saved.url}/t?token=***&room=ops`);
    const writer = await keyWith(['notifications:write']);
    const echoed = await server.call('POST', '/api/adapters/test-connection', writer, { id: hook.body.id, config: { webhookUrl: hook.body.config.webhookUrl } });
    expect(echoed.body.success, JSON.stringify(echoed.body)).toBe(true);
    expect(saved.hits.at(-1)?.url).toBe(`/t?token=${STORED_TOKEN}&room=ops`);
    const moved = await server.call('POST', '/api/adapters/test-connection', writer, { id: hook.body.id, config: { webhookUrl: `${evil.url}/t?token=***&room=ops` } });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toContain('config.webhookUrl');
    expect(evil.hits).toEqual([]);
  });
});
