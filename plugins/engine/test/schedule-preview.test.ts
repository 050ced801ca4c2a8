// GET /api/schedule-preview: the job editor shows the next runs of a schedule in the system timezone (issue 47,
// item 6). The scheduler reads cron in that zone, so the preview must: a browser's zone would show other times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextRunsOf } from '../src/scheduler/next-runs.js';
import { call, createTarget, startEngineServer, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

describe('next runs of a schedule', () => {
  it('fires at 03:00 Berlin time, which is 02:00 UTC in winter and 01:00 UTC in summer', () => {
    const runs = nextRunsOf('0 3 * * *', 'Europe/Berlin', 5)!;
    expect(runs).toHaveLength(5);
    for (const run of runs) {
      expect(run.local).toMatch(/T03:00:00\+0[12]:00$/);
      expect(new Date(run.at).getUTCHours()).toBe(run.local.endsWith('+01:00') ? 2 : 1);
    }
    const times = runs.map((run) => Date.parse(run.at));
    expect(times.every((time, index) => index === 0 || time > times[index - 1]!)).toBe(true);
    expect(times[0]).toBeGreaterThan(Date.now());
  });

  it('is null for what the scheduler would not take: six fields, words, an empty string', () => {
    expect(nextRunsOf('0 0 3 * * *', 'UTC', 5)).toBeNull();
    expect(nextRunsOf('every night', 'UTC', 5)).toBeNull();
    expect(nextRunsOf('', 'UTC', 5)).toBeNull();
  });
});

describe('GET /api/schedule-preview (libsql)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let key: string;

  beforeAll(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    server.settings.values.set('systemTimezone', 'America/New_York');
    key = await server.apiKey('editor', ['jobs:read']);
  });
  afterAll(async () => {
    await server.close();
    await target.drop();
  });

  it('answers the next five runs in the system timezone, or as many as asked', async () => {
    const answer = await call(server.url, 'GET', `/api/schedule-preview?schedule=${encodeURIComponent('30 4 * * 1')}`, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ schedule: '30 4 * * 1', timezone: 'America/New_York' });
    expect(answer.body.data.runs).toHaveLength(5);
    for (const run of answer.body.data.runs) {
      expect(run.local).toMatch(/T04:30:00-0[45]:00$/);
      expect(new Date(run.at).getUTCDay()).toBe(1);
    }
    const three = await call(server.url, 'GET', `/api/schedule-preview?schedule=${encodeURIComponent('0 * * * *')}&count=3`, { key });
    expect(three.body.data.runs).toHaveLength(3);
  });

  it('refuses a bad schedule or count with 400 naming it, and callers without jobs:read', async () => {
    const bad = await call(server.url, 'GET', `/api/schedule-preview?schedule=${encodeURIComponent('0 0 3 * * *')}`, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/schedule: "0 0 3 \* \* \*" is not a 5-part cron expression/);
    for (const query of ['', '?schedule=', '?schedule=0%203%20*%20*%20*&count=0', '?schedule=0%203%20*%20*%20*&count=21', '?schedule=0%203%20*%20*%20*&extra=1', '?schedule=%00']) {
      const answer = await call(server.url, 'GET', `/api/schedule-preview${query}`, { key });
      expect(answer.status, query).toBe(400);
    }
    expect((await call(server.url, 'GET', '/api/schedule-preview?schedule=0%203%20*%20*%20*')).status).toBe(401);
    const other = await server.apiKey('reader', ['history:read']);
    expect((await call(server.url, 'GET', '/api/schedule-preview?schedule=0%203%20*%20*%20*', { key: other })).status).toBe(403);
  });
});
