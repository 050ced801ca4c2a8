// Issue 48 (part 1, acceptance 3's pairing half): a real server process (apps/server/dist/main.js) and real
// `holdfast agent` processes. Enrollment works once, an expired token is refused, the agent shows online with what it
// reported, it reconnects by itself after a server restart, disable and revoke close it at once (revoke for good).
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SERVER_MAIN = fileURLToPath(new URL('../../server/dist/main.js', import.meta.url));
const CLI = fileURLToPath(new URL('../bin/holdfast.mjs', import.meta.url));
const run = promisify(execFile);
const ADMIN = { email: 'agents-admin@example.test', password: 'correct horse battery staple' };

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

/** The first JSON log line at or after `from` whose msg is `msg` (and that `match` accepts). */
async function lineAfter(process: SpawnedProcess, from: number, msg: string, timeoutMs = 30_000, match: (line: LogLine) => boolean = () => true): Promise<LogLine & { index: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (let index = from; index < process.stdoutLines.length; index += 1) {
      let line: LogLine;
      try {
        line = JSON.parse(process.stdoutLines[index]!) as LogLine;
      } catch {
        continue;
      }
      if (line.msg === msg && match(line)) return { ...line, index };
    }
    if (Date.now() > deadline) {
      throw new Error(`no "${msg}" log line within ${timeoutMs} ms; output:\n${process.stdoutLines.slice(from).join('\n')}\n${process.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const exitedWithin = (process: SpawnedProcess, ms: number) =>
  Promise.race([process.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running after ${ms} ms: ${process.stdoutLines.join('\n')}`)), ms))]);

describe('holdfast agent against a real server process', () => {
  let work: string;
  let dataDir: string;
  let server: SpawnedProcess | undefined;
  let port = 0;
  let key = '';
  const agents: SpawnedProcess[] = [];

  const startServer = async (extra: NodeJS.ProcessEnv = {}) => {
    server = spawnNode(SERVER_MAIN, [], {
      PATH: process.env.PATH,
      PORT: String(port),
      HOLDFAST_DATA_DIR: dataDir,
      HOLDFAST_ADMIN_EMAIL: ADMIN.email,
      HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'info',
      ...extra,
    });
    port = Number((await server.waitForLog('holdfast listening', 60_000)).port);
  };
  const url = () => `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const startAgent = (stateDir: string, token?: string) => {
    const agent = spawnNode(CLI, ['agent', '--server', url(), '--state-dir', stateDir, ...(token ? ['--token', token] : []), '--max-backoff', '2'], {
      PATH: process.env.PATH,
      HOME: work,
    });
    agents.push(agent);
    return agent;
  };
  const privateDir = async (name: string) => {
    const dir = join(work, name);
    await mkdir(dir, { mode: 0o700 });
    return dir;
  };

  beforeAll(async () => {
    for (const file of [SERVER_MAIN, join(CLI, '../../dist/main.js')]) {
      if (!existsSync(file)) throw new Error(`${file} is missing: build first (npm run build)`);
    }
    work = await mkdtemp(join(tmpdir(), 'holdfast-agent-process-'));
    dataDir = join(work, 'data');
    await startServer();
    const signIn = await fetch(`${url()}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    expect(signIn.status).toBe(200);
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const issued = await fetch(`${url()}/api/api-keys`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'agents test', permissions: ['agents:read', 'agents:write'] }),
    });
    expect(issued.status).toBe(201);
    key = ((await issued.json()) as { key: string }).key;
  }, 90_000);

  afterAll(async () => {
    for (const agent of agents) if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await rm(work, { recursive: true, force: true });
  });

  it('refuses a state directory other users can read, and an unenrolled start without a token', async () => {
    const open = join(work, 'open-state');
    await mkdir(open);
    await chmod(open, 0o755);
    const refused = startAgent(open, 'hfa_enroll_whatever');
    expect((await exitedWithin(refused, 30_000)).code).toBe(10);
    expect(refused.stdoutLines.join('\n')).toContain('is open to other users (mode 755): run chmod 700');
    expect(existsSync(join(open, 'agent-key.pem'))).toBe(false);

    const noToken = startAgent(await privateDir('no-token'));
    expect((await exitedWithin(noToken, 30_000)).code).toBe(10);
    expect(noToken.stdoutLines.join('\n')).toContain('not enrolled yet: start it once with --token');
  }, 60_000);

  let agentId = '';
  let agent: SpawnedProcess;
  let stateDir = '';

  it('enrolls once with the token, keeps its key private, and shows online with version, host and adapters', async () => {
    const created = await call('POST', '/api/agents', { name: 'process-agent' });
    expect(created.status).toBe(201);
    agentId = created.body.agent.id;
    stateDir = await privateDir('state');
    agent = startAgent(stateDir, created.body.enrollmentToken);
    const connected = await lineAfter(agent, 0, 'connected', 60_000);
    expect(connected.agentId).toBe(agentId);
    expect((await stat(join(stateDir, 'agent-key.pem'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(stateDir, 'agent.json'), 'utf8'))).toMatchObject({ agentId, server: url() });

    const shown = (await call('GET', `/api/agents/${agentId}`)).body;
    const cliVersion = (JSON.parse(await readFile(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { version: string }).version;
    expect(shown).toMatchObject({ status: 'online', version: cliVersion, host: hostname(), enrollmentExpiresAt: null });
    expect(shown.adapters).toEqual(expect.arrayContaining(['@holdfast/source-postgres', '@holdfast/source-mysql', '@holdfast/source-directory']));
    expect(shown.adapters.every((name: string) => name.startsWith('@holdfast/source-'))).toBe(true);

    // The same token in another agent (its own new key) is refused for good.
    const thief = startAgent(await privateDir('second-use'), created.body.enrollmentToken);
    expect((await exitedWithin(thief, 60_000)).code).toBe(11);
    expect(thief.stdoutLines.join('\n')).toContain('enrollment token refused: unknown or already used');
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('online');
  }, 120_000);

  it('killed during a test restore, it removes the scratch folder that restore left when it starts again', async () => {
    // What a scratch-file test restore leaves when the agent dies in it: the folder with the restored file, listed in
    // the state directory's journal (the calls themselves: agent-scratch-journal.test.ts).
    agent.child.kill('SIGKILL');
    await exitedWithin(agent, 10_000);
    const scratch = join(work, 'scratch', 'holdfast-test-restore-0123456789ab-Ab12Cd');
    await mkdir(scratch, { recursive: true });
    await writeFile(join(scratch, 'restored.sqlite'), 'rows');
    await writeFile(join(stateDir, 'scratch-folders.json'), JSON.stringify([scratch]));
    agent = startAgent(stateDir);
    const swept = await lineAfter(agent, 0, 'removed scratch folders a test restore left when the agent stopped', 30_000);
    expect(swept.folders).toEqual([scratch]);
    await lineAfter(agent, 0, 'connected', 60_000);
    expect(existsSync(scratch)).toBe(false);
    expect(existsSync(join(stateDir, 'scratch-folders.json'))).toBe(false);
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('online');
  }, 90_000);

  it('connects through the HTTP proxy named by HTTP_PROXY (CONNECT tunnel), enrolling with HOLDFAST_AGENT_TOKEN', async () => {
    // A minimal forward proxy that only tunnels (RFC 9110 CONNECT), as corporate proxies do for TLS; it records the
    // targets so the test knows the agent went through it rather than around it.
    const tunnelled: string[] = [];
    const proxy: Server = createServer((_request, response) => response.writeHead(405).end());
    proxy.on('connect', (request, client, head) => {
      tunnelled.push(String(request.url));
      const [host, targetPort] = String(request.url).split(':');
      const upstream = connect(Number(targetPort), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const created = await call('POST', '/api/agents', { name: 'proxied-agent' });
      // The token comes from HOLDFAST_AGENT_TOKEN here (kept out of the process list).
      const proxied = spawnNode(CLI, ['agent', '--server', url(), '--state-dir', await privateDir('proxied')], {
        PATH: process.env.PATH,
        HOME: work,
        HTTP_PROXY: proxyUrl,
        HOLDFAST_AGENT_TOKEN: created.body.enrollmentToken,
      });
      agents.push(proxied);
      const starting = await lineAfter(proxied, 0, 'agent starting', 60_000);
      expect(starting.proxy).toBe(new URL(proxyUrl).host);
      await lineAfter(proxied, 0, 'connected', 30_000);
      expect(tunnelled).toEqual([`127.0.0.1:${port}`]);
      expect((await call('GET', `/api/agents/${created.body.agent.id}`)).body.status).toBe('online');
      proxied.child.kill('SIGTERM');
      expect((await exitedWithin(proxied, 10_000)).code).toBe(0);
    } finally {
      proxy.close();
      proxy.closeAllConnections();
    }
  }, 90_000);

  it('connects to an https server through HTTPS_PROXY with TLS end to end (the proxy sees only a TLS handshake)', async () => {
    // The server behind a TLS terminator for "localhost" (a self-signed certificate the agent trusts through
    // NODE_EXTRA_CA_CERTS, as an operator with a private CA does), reached through a CONNECT-only proxy named by
    // HTTPS_PROXY. HTTP_PROXY names a closed port: an https server must take HTTPS_PROXY.
    const certDir = await privateDir('tls');
    const certFile = join(certDir, 'cert.pem');
    const keyFile = join(certDir, 'key.pem');
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-days', '1', '-keyout', keyFile, '-out', certFile]);
    const terminator = createTlsServer({ cert: await readFile(certFile), key: await readFile(keyFile) }, (secure) => {
      const plain = connect(port, '127.0.0.1', () => {
        secure.pipe(plain);
        plain.pipe(secure);
      });
      plain.on('error', () => secure.destroy());
      secure.on('error', () => plain.destroy());
    });
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    const tlsPort = (terminator.address() as AddressInfo).port;
    const tunnelled: Array<{ target: string; firstByte?: number }> = [];
    const proxy: Server = createServer((_request, response) => response.writeHead(405).end());
    proxy.on('connect', (request, client, head) => {
      const record: { target: string; firstByte?: number } = { target: String(request.url) };
      tunnelled.push(record);
      const upstream = connect(tlsPort, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      client.once('data', (chunk: Buffer) => (record.firstByte ??= chunk[0]));
      if (head.length > 0) record.firstByte = head[0];
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const created = await call('POST', '/api/agents', { name: 'tls-proxied-agent' });
      const secured = spawnNode(CLI, ['agent', '--server', `https://localhost:${tlsPort}`, '--state-dir', await privateDir('tls-proxied')], {
        PATH: process.env.PATH,
        HOME: work,
        HTTPS_PROXY: proxyUrl,
        HTTP_PROXY: 'http://127.0.0.1:1',
        NODE_EXTRA_CA_CERTS: certFile,
        HOLDFAST_AGENT_TOKEN: created.body.enrollmentToken,
      });
      agents.push(secured);
      const starting = await lineAfter(secured, 0, 'agent starting', 60_000);
      expect(starting.proxy).toBe(new URL(proxyUrl).host);
      await lineAfter(secured, 0, 'connected', 30_000);
      // Every tunnel went to the TLS port by name, and its first byte was a TLS handshake record (22), not HTTP.
      expect(tunnelled.length).toBeGreaterThan(0);
      for (const tunnel of tunnelled) expect(tunnel).toEqual({ target: `localhost:${tlsPort}`, firstByte: 22 });
      expect((await call('GET', `/api/agents/${created.body.agent.id}`)).body.status).toBe('online');
      secured.child.kill('SIGTERM');
      expect((await exitedWithin(secured, 10_000)).code).toBe(0);
    } finally {
      proxy.close();
      proxy.closeAllConnections();
      terminator.close();
    }
  }, 90_000);

  it('reconnects by itself after the server restarts', async () => {
    const before = agent.stdoutLines.length;
    server!.child.kill('SIGTERM');
    expect((await exitedWithin(server!, 30_000)).code).toBe(0);
    await lineAfter(agent, before, 'disconnected; reconnecting', 10_000, (line) => line.code === 1001);
    // Down for a moment: the agent keeps trying (connection refused) with its backoff.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // Back with 2-second enrollment tokens, for the expiry test below.
    await startServer({ HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS: '2' });
    await lineAfter(agent, before, 'connected', 30_000);
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('online');
  }, 90_000);

  it('refuses an expired enrollment token', async () => {
    const created = await call('POST', '/api/agents', { name: 'late-agent' });
    expect(Date.parse(created.body.expiresAt) - Date.now()).toBeLessThanOrEqual(2_000);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const late = startAgent(await privateDir('late'), created.body.enrollmentToken);
    expect((await exitedWithin(late, 60_000)).code).toBe(11);
    expect(late.stdoutLines.join('\n')).toContain('enrollment token refused: expired');
    expect((await call('GET', `/api/agents/${created.body.agent.id}`)).body).toMatchObject({ status: 'pending', publicKey: null });
  }, 90_000);

  it('disable disconnects it at once and it is refused until enabled', async () => {
    const before = agent.stdoutLines.length;
    const started = Date.now();
    expect((await call('PATCH', `/api/agents/${agentId}`, { enabled: false })).status).toBe(200);
    const cut = await lineAfter(agent, before, 'disconnected; reconnecting', 5_000, (line) => line.code === 4003);
    expect(Date.now() - started).toBeLessThan(3_000);
    // It keeps trying and keeps being refused.
    const refused = await lineAfter(agent, cut.index + 1, 'disconnected; reconnecting', 10_000, (line) => line.code === 4003);
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('offline');
    expect((await call('PATCH', `/api/agents/${agentId}`, { enabled: true })).status).toBe(200);
    await lineAfter(agent, refused.index, 'connected', 15_000);
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('online');
  }, 60_000);

  it('revoke disconnects it at once and it can never connect again', async () => {
    const started = Date.now();
    expect((await call('DELETE', `/api/agents/${agentId}`)).body.status).toBe('revoked');
    expect((await exitedWithin(agent, 5_000)).code).toBe(11);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(agent.stdoutLines.join('\n')).toContain('agent revoked: it can never connect again');
    // Started again with the same key: refused for good, at once.
    const again = startAgent(stateDir);
    expect((await exitedWithin(again, 60_000)).code).toBe(11);
    expect(again.stdoutLines.join('\n')).toContain('agent revoked: it can never connect again');
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('revoked');
  }, 90_000);
});
