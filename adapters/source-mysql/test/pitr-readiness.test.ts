// `pointInTime().readiness`, which the catalog asks before saving a point-in-time job (issue 44 acceptance 5): the
// check's own sentences, from the real MariaDB servers (3307 with binary logging, 3306 without); a logical source has
// no point-in-time support to ask; an already aborted signal rejects with ABORTED before the server is contacted.
import { container } from 'tsyringe';
import { describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { server } from './helpers.js';
import { pitrServer } from './pitr-helpers.js';

function readinessOf(config: Record<string, unknown>) {
  const support = instantiateAdapter(container, definition, config).pointInTime!();
  expect(support?.readiness).toBeTypeOf('function');
  return (signal = new AbortController().signal) => support!.readiness!({ signal });
}

const pitrAccount = (account: keyof typeof pitrServer.users) => ({ mode: 'point-in-time', host: pitrServer.host, port: pitrServer.port, ...pitrServer.users[account], tls: 'disable' });

describe('point-in-time readiness (MySQL/MariaDB)', () => {
  it('has no problem for the replication account', async () => {
    const readiness = await readinessOf(pitrAccount('binlog'))();
    expect(readiness.problems).toEqual([]);
    expect(Array.isArray(readiness.warnings)).toBe(true);
  });

  it('names the missing REPLICATION SLAVE, and both privileges for an account with neither', async () => {
    const noSlave = await readinessOf(pitrAccount('noSlave'))();
    expect(noSlave.problems).toHaveLength(1);
    expect(noSlave.problems[0]).toMatch(/^account 'holdfast_noslave'@'%' lacks the REPLICATION SLAVE privilege/);
    const noRepl = await readinessOf(pitrAccount('noRepl'))();
    expect(noRepl.problems).toHaveLength(2);
    expect(noRepl.problems.join(' ')).toContain('lacks the REPLICATION SLAVE privilege');
    expect(noRepl.problems.join(' ')).toContain('lacks the REPLICATION CLIENT privilege');
  });

  it('names binary logging off on the machine MariaDB (3306)', async () => {
    const readiness = await readinessOf({ mode: 'point-in-time', ...server, password: '', tls: 'disable' })();
    expect(readiness.problems).toHaveLength(1);
    expect(readiness.problems[0]).toContain(`binary logging is off on ${server.host}:${server.port} (log_bin)`);
    expect(readiness.warnings).toEqual([]);
  });

  it('is absent in logical mode, and rejects with ABORTED on an aborted signal', async () => {
    const logical = instantiateAdapter(container, definition, { ...server, password: '', tls: 'disable' }) as SourceAdapter;
    expect(logical.pointInTime!()).toBeNull();
    const controller = new AbortController();
    controller.abort();
    const error = await readinessOf(pitrAccount('binlog'))(controller.signal).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
  });
});
