// Bodies that once gave 500 or were stored altered (issue 10, items 4, 6 and 15): deep nesting, NUL and control
// characters, invalid UTF-8 and lone surrogates. Every one must be a 400 naming the problem, before any handler runs.
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TEST_ROUTES } from './routes.js';
import { FakeAuthenticator, registerFakes, startApp, type RunningApp } from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function send(path: string, body: string | Uint8Array, token?: string): Promise<{ status: number; body: any }> {
  running ??= await startApp({ routes: ALL_TEST_ROUTES, register: (c) => registerFakes(c, { authenticator: new FakeAuthenticator() }) });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${running.url}${path}`, { method: 'POST', headers, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe('deep JSON', () => {
  it('regression (issue 10.6): 100k nested arrays answer 400 naming the depth limit, not a 500 stack overflow', async () => {
    const answer = await send('/api/public/loose', `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('Invalid request: body: nests deeper than 32 levels');
  });

  it('regression (issue 10.6): 5,000 nested objects on an authenticated route answer 400, and 32 levels are still accepted', async () => {
    let deep = '1';
    for (let level = 0; level < 5_000; level++) deep = `{"a":${deep}}`;
    const refused = await send('/api/things', deep, 'writer');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/nests deeper than 32 levels/);
    let allowed = '1';
    for (let level = 0; level < 31; level++) allowed = `{"a":${allowed}}`;
    const accepted = await send('/api/public/loose', `{"x":${allowed}}`);
    expect(accepted.status).toBe(200);
    expect(accepted.body.keys).toEqual(['x']);
  });

  it('brackets inside strings do not count as nesting', async () => {
    const answer = await send('/api/public/loose', JSON.stringify({ text: '['.repeat(1000) }));
    expect(answer.status).toBe(200);
  });
});

describe('text the databases cannot hold', () => {
  it('regression (issue 10.4): a NUL in any body string, at any depth, answers 400 naming the field', async () => {
    const answer = await send('/api/things', JSON.stringify({ name: 'a\u0000b', tags: ['ok', 'x\u0000'] }), 'writer');
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toEqual([
      { path: 'body.name', message: 'must not contain a NUL character' },
      { path: 'body.tags[1]', message: 'must not contain a NUL character' },
    ]);
  });

  it('regression (issue 10.4): control characters in keys and query filters answer 400; TAB/LF stay allowed in body text', async () => {
    const key = await send('/api/public/loose', '{"a\\u0007b": 1}');
    expect(key.status).toBe(400);
    expect(key.body.issues[0].message).toBe('key must not contain control characters');
    const bell = await send('/api/public/loose', JSON.stringify({ note: 'ring\u0007' }));
    expect(bell.status).toBe(400);
    expect(bell.body.issues).toEqual([{ path: 'body.note', message: 'must not contain control characters' }]);
    const multiline = await send('/api/public/loose', JSON.stringify({ note: 'line 1\n\tline 2' }));
    expect(multiline.status).toBe(200);
    const query = await fetch(`${running!.url}/api/public/echo?page=1&q=a%0Ab`);
    expect(query.status).toBe(400);
    expect(((await query.json()) as { issues: unknown }).issues).toEqual([{ path: 'query.q', message: 'must not contain control characters' }]);
  });

  it('regression (issue 10.15): invalid UTF-8 bytes answer 400 instead of being stored as U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const answer = await send('/api/things', bytes, 'writer');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('Invalid request: body: is not valid UTF-8');
    const overlong = await send('/api/public/loose', Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]));
    expect(overlong.status).toBe(400);
  });

  it('regression (issue 10.15): lone surrogates in values and keys answer 400; a valid pair passes', async () => {
    const high = await send('/api/things', '{"name":"x\\ud800y"}', 'writer');
    expect(high.status).toBe(400);
    expect(high.body.issues).toEqual([{ path: 'body.name', message: 'must not contain a lone UTF-16 surrogate (not valid Unicode)' }]);
    const low = await send('/api/public/loose', '{"\\udc00":1}');
    expect(low.status).toBe(400);
    const pair = await send('/api/things', '{"name":"\\ud83d\\ude00"}', 'writer');
    expect(pair.status).toBe(201);
    expect(pair.body.name).toBe('\u{1f600}');
  });
});
