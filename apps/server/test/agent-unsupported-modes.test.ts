// What is not offered for a source on a remote agent (docs/agents.md), refused when saved rather than failing later:
// - point-in-time recovery: a source in a point-in-time mode (PostgreSQL `mode: physical`) bound to an agent would be
//   saved as a point-in-time source whose change-log stream never runs. Each order of the two settings is refused with
//   a 422 naming agentId, and nothing is saved.
// - test restores into a folder: the engine makes and counts that folder on the server's disk, the restore would write
//   on the agent's. A job with such a test restore on an agent-bound folder source is refused (422), and nothing saved.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

describe('point-in-time sources and folder test restores are refused for sources on remote agents', () => {
  let server: FullServer;
  let admin: Caller;
  let agentId: string;

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const created = await server.call('POST', '/api/agents', admin, { name: 'pitr-agent' });
    expect(created.status).toBe(201);
    agentId = created.body.agent.id;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const physical = { user: 'root', host: '10.99.0.2', password: 'p', mode: 'physical' };
  const logical = { user: 'root', host: '10.99.0.2', password: 'p' };
  const refusal = /Invalid agentId: source "[^"]+" is in a point-in-time mode, which is not offered through a remote agent/;

  it('refuses a physical-mode source created with agentId, and saves nothing', async () => {
    const created = await server.call('POST', '/api/adapters', admin, { name: 'pitr on agent', type: 'database', adapterId: 'postgres', config: physical, agentId });
    expect(created.status, JSON.stringify(created.body)).toBe(422);
    expect(created.body.error).toMatch(refusal);
    const list = await server.call('GET', '/api/adapters?type=database', admin);
    expect(JSON.stringify(list.body)).not.toContain('pitr on agent');
  });

  it('refuses binding a physical-mode source to an agent, and switching a bound source to physical mode; the source is unchanged', async () => {
    const pitr = await server.call('POST', '/api/adapters', admin, { name: 'pitr on server', type: 'database', adapterId: 'postgres', config: physical });
    expect(pitr.status, JSON.stringify(pitr.body)).toBe(201);
    const bind = await server.call('PUT', `/api/adapters/${pitr.body.id}`, admin, { agentId });
    expect(bind.status).toBe(422);
    expect(bind.body.error).toMatch(refusal);
    expect((await server.call('GET', `/api/adapters/${pitr.body.id}`, admin)).body.agentId).toBeNull();

    const bound = await server.call('POST', '/api/adapters', admin, { name: 'logical on agent', type: 'database', adapterId: 'postgres', config: logical, agentId });
    expect(bound.status, JSON.stringify(bound.body)).toBe(201);
    const switched = await server.call('PUT', `/api/adapters/${bound.body.id}`, admin, { config: physical });
    expect(switched.status).toBe(422);
    expect(switched.body.error).toMatch(refusal);
    const after = await server.call('GET', `/api/adapters/${bound.body.id}`, admin);
    expect(after.body.agentId).toBe(agentId);
    expect(after.body.config.mode ?? 'logical').toBe('logical');
  });

  it('refuses a job whose test restore goes into a folder when its folder source runs on an agent; a database-free job saves', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'hf-agent-folder-'));
    const source = await server.call('POST', '/api/adapters', admin, { name: 'folder on agent', type: 'database', adapterId: 'directory', config: { paths: ['/srv/data'] }, agentId });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const destination = await server.call('POST', '/api/adapters', admin, { name: 'disk for agent jobs', type: 'storage', adapterId: 'local', config: { path: folder } });
    expect(destination.status, JSON.stringify(destination.body)).toBe(201);
    const job = { name: 'agent folder job', schedule: '0 3 * * *', enabled: false, sourceId: source.body.id, databases: [], destinations: [{ configId: destination.body.id }] };
    const refused = await server.call('POST', '/api/jobs', admin, { ...job, testRestore: { target: { type: 'directory', path: join(folder, 'scratch') } } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error).toContain('source "folder on agent" runs on a remote agent: test restores into a folder are not offered for it');
    expect(JSON.stringify((await server.call('GET', '/api/jobs', admin)).body)).not.toContain('agent folder job');
    const saved = await server.call('POST', '/api/jobs', admin, job);
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const added = await server.call('PUT', `/api/jobs/${saved.body.id as string}`, admin, { testRestore: { target: { type: 'directory', path: join(folder, 'scratch') } } });
    expect(added.status).toBe(422);
    expect((await server.call('GET', `/api/jobs/${saved.body.id as string}`, admin)).body.testRestore ?? null).toBeNull();
  });
});
