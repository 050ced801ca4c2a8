// Issue 47.5: audit entries other plugins write without a name (updates, runs) show the current name of the
// catalog record they point at, read through the kernel's ResourceNames port; deleted records never fail the read.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type Caller, type FullServer } from './support/full-server.js';

interface Entry {
  action: string;
  resource: string;
  resourceId: string | null;
  resourceName: string | null;
}

async function settled(server: FullServer, caller: Caller, executionId: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}`, caller);
    expect(answer.status).toBe(200);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.each(['sqlite', 'postgresql'] as const)('audit resource names on %s', (dialect) => {
  let server: FullServer | undefined;
  const directories: string[] = [];

  afterAll(async () => {
    await server?.close();
    await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('names jobs, adapter configs and profiles in entries written without a name, and keeps deleted ones readable', async () => {
    server = await startFullServer(dialect);
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    const localDir = await mkdtemp(join(tmpdir(), 'holdfast-audit-names-'));
    directories.push(localDir);
    const send = async (method: string, path: string, body: unknown, status: number) => {
      const answer = await server!.call(method, path, admin, body);
      expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
      return answer.body;
    };

    const source = await send('POST', '/api/adapters', { name: 'orders db', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } }, 201);
    const disk = await send('POST', '/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: localDir } }, 201);
    const job = await send('POST', '/api/jobs', { name: 'orders', schedule: '0 3 * * *', sourceId: source.id, databases: ['holdfast_audit_names_missing'], destinations: [{ configId: disk.id, priority: 0 }] }, 201);
    // Updates are audited with the changed field names only; the names come from the catalog at read time.
    await send('PUT', `/api/adapters/${disk.id}`, { name: 'local backup disk' }, 200);
    await send('PUT', `/api/jobs/${job.id}`, { name: 'orders nightly' }, 200);
    const vault = await send('POST', '/api/vault', { name: 'short-lived key' }, 201);
    await send('PUT', `/api/vault/${vault.id}`, { name: 'renamed key' }, 200);
    await send('DELETE', `/api/vault/${vault.id}`, undefined, 200);
    const run = await send('POST', `/api/jobs/${job.id}/run`, {}, 200);
    await settled(server, admin, run.executionId);

    const audit = await server.call('GET', '/api/audit?pageSize=100', admin);
    expect(audit.status).toBe(200);
    const entries = audit.body.entries as Entry[];
    const one = (action: string, resource: string, resourceId: string) => {
      const found = entries.filter((entry) => entry.action === action && entry.resource === resource && entry.resourceId === resourceId);
      expect(found, `${action} ${resource}`).toHaveLength(1);
      return found[0]!;
    };
    expect(one('UPDATE', 'adapter', disk.id).resourceName).toBe('local backup disk');
    expect(one('UPDATE', 'job', job.id).resourceName).toBe('orders nightly');
    expect(one('execute', 'job', job.id).resourceName).toBe('orders nightly');
    // Created entries keep the name they were written with.
    expect(one('CREATE', 'job', job.id).resourceName).toBe('orders');
    expect(one('CREATE', 'adapter', disk.id).resourceName).toBe('local disk');
    // The vault profile is gone: its unnamed update stays readable without a name; the delete stored its last name.
    expect(one('UPDATE', 'vault', vault.id).resourceName).toBeNull();
    expect(one('DELETE', 'vault', vault.id).resourceName).toBe('renamed key');
    expect(one('CREATE', 'vault', vault.id).resourceName).toBe('short-lived key');

    // The resource filter reads the same names.
    const jobsOnly = await server.call('GET', '/api/audit?resource=job', admin);
    expect(jobsOnly.status).toBe(200);
    expect((jobsOnly.body.entries as Entry[]).filter((entry) => entry.action !== 'CREATE').every((entry) => entry.resourceName === 'orders nightly')).toBe(true);
  });
});
