// `pointInTime().readiness`, which the catalog asks before saving a point-in-time job: the replication check's own
// sentences from the PITR test cluster (127.0.0.1:5433) for its roles; a logical source has no point-in-time support
// to ask; an already aborted signal rejects with ABORTED before the server is contacted.
import { container } from 'tsyringe';
import { describe, expect, it } from 'vitest';
import { instantiateAdapter, isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { physicalSettings, superSql } from './pitr-helpers.js';

function readinessOf(config: Record<string, unknown>) {
  const support = instantiateAdapter(container, definition, config).pointInTime!();
  expect(support?.readiness).toBeTypeOf('function');
  return (signal = new AbortController().signal) => support!.readiness!({ signal });
}

describe('point-in-time readiness (PostgreSQL physical mode)', () => {
  it('has no problem for the replication role; an unlimited max_slot_wal_keep_size is a warning only', async () => {
    const readiness = await readinessOf(physicalSettings('repl'))();
    expect(readiness.problems).toEqual([]);
    const [setting] = await superSql<{ keep: string }>("SELECT current_setting('max_slot_wal_keep_size') AS keep");
    const keep = setting!.keep;
    if (keep === '-1') expect(readiness.warnings.join(' ')).toContain('max_slot_wal_keep_size is -1 (unlimited)');
    else expect(readiness.warnings).toEqual([]);
  });

  it('names the missing REPLICATION privilege and the missing pg_hba.conf line', async () => {
    const norepl = await readinessOf(physicalSettings('norepl'))();
    expect(norepl.problems.join(' ')).toContain('role "holdfast_norepl" lacks the REPLICATION privilege');
    const nohba = await readinessOf(physicalSettings('replNoHba'))();
    expect(nohba.problems).toHaveLength(1);
    expect(nohba.problems[0]).toContain('has no line allowing replication connections for role "holdfast_repl_nohba"');
  });

  it('is absent in logical mode, and rejects with ABORTED on an aborted signal', async () => {
    const logical = instantiateAdapter(container, definition, { ...physicalSettings('repl'), mode: 'logical' }) as SourceAdapter;
    expect(logical.pointInTime!()).toBeNull();
    const controller = new AbortController();
    controller.abort();
    const error = await readinessOf(physicalSettings('repl'))(controller.signal).catch((caught: unknown) => caught);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
  });
});
