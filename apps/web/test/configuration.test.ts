import { describe, expect, it } from 'vitest';
import { credentialPayload } from '../src/configuration/credential-fields.js';
import { previewName, SAMPLE_MOMENT } from '../src/configuration/naming-preview.js';
import { describeRetention, retentionConfig, retentionFromConfig } from '../src/configuration/retention.js';

const sample = { jobName: 'Immich', dbName: 'photos', chain: '', at: SAMPLE_MOMENT, timeZone: 'UTC' };

describe('naming template preview (the examples of docs/naming.md)', () => {
  it('renders the default pattern in UTC and in the system timezone', () => {
    expect(previewName('{job_name}_yyyy-MM-dd_HH-mm-ss', sample)).toEqual({ name: 'Immich_2026-11-19_10-05-09' });
    expect(previewName('{job_name}_yyyy-MM-dd_HH-mm-ss', { ...sample, timeZone: 'Europe/Berlin' })).toEqual({ name: 'Immich_2026-11-19_11-05-09' });
  });

  it('keeps quoted text literal and names untouched by date tokens', () => {
    expect(previewName("'daily'_yyyy", sample)).toEqual({ name: 'daily_2026' });
    expect(previewName('{job_name}_yyyy', { ...sample, jobName: 'backup_yyyy' })).toEqual({ name: 'backup_yyyy_2026' });
    expect(previewName('{db_name}-MMM-SSS', sample)).toEqual({ name: 'photos-Nov-042' });
  });

  it('drops an empty {chain} with one adjacent separator', () => {
    expect(previewName('{job_name}_{chain}_yyyy', sample)).toEqual({ name: 'Immich_2026' });
    expect(previewName('{job_name}_{chain}_yyyy', { ...sample, chain: '4' })).toEqual({ name: 'Immich_4_2026' });
    expect(previewName('{chain}_{job_name}_yyyy', sample)).toEqual({ name: 'Immich_2026' });
  });

  it('names the problem of a malformed pattern', () => {
    expect(previewName('{job}_yyyy', sample)).toEqual({ problem: expect.stringContaining('unknown token "{job}"') });
    expect(previewName('abc_{job_name', sample)).toEqual({ problem: expect.stringContaining('never closed') });
    expect(previewName('  ', sample)).toEqual({ problem: 'pattern is empty' });
  });
});

// The next runs of a schedule are the server's (GET /api/schedule-preview): plugins/engine/test/schedule-preview.test.ts.

describe('credential payloads', () => {
  it('leaves empty secrets out (kept on edit) and names missing required fields on create', () => {
    expect(credentialPayload('USERNAME_PASSWORD', { username: 'svc', password: '' }, { password: true })).toEqual({ data: { username: 'svc' }, errors: {} });
    expect(credentialPayload('USERNAME_PASSWORD', { username: 'svc', password: '' }, null).errors).toEqual({ password: 'Enter the password' });
  });
});

describe('retention policy JSON', () => {
  it('sends only the fields of the chosen mode and reads them back', () => {
    const gfs = { mode: 'gfs', daily: 7, weekly: 4 } as const;
    expect(retentionConfig(retentionFromConfig(gfs))).toEqual(gfs);
    expect(retentionConfig({ ...retentionFromConfig(gfs), mode: 'keep-last', count: 3 })).toEqual({ mode: 'keep-last', count: 3 });
    expect(describeRetention({ mode: 'keep-last', count: 14 })).toBe('Keep the newest 14');
  });
});
