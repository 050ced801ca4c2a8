// Point-in-time recovery is not offered through remote agents (docs/agents.md): a source in a point-in-time mode
// (PostgreSQL `mode: physical`) bound to an agent would be saved as a point-in-time source whose change-log stream
// never runs. Each order of the two settings is refused with a 422 naming agentId, and nothing is saved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

describe('point-in-time sources and remote agents', () => {
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
});
