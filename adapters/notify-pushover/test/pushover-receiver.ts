/**
 * A local receiver following the Pushover Message API (https://pushover.net/api): `POST /1/messages.json` with a
 * form-encoded (or JSON) body holding `token` (the application token), `user` (30-character key), a `message` of
 * 1..1024 characters, an optional `title` <= 250, `priority` -2..2 (2 requires `retry` >= 30 and `expire` <= 10800),
 * optional `sound` and `device`. Answers like Pushover: 200 `{ status: 1, request }`, 400 `{ status: 0, errors: [...] }`
 * (including an invalid application token), 404 for other paths. It is not Pushover: tests never reach pushover.net.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

/** The request's parameters, from either encoding Pushover accepts. */
export function pushoverParams(request: RecordedRequest): Record<string, string> {
  const text = request.body.toString('utf8');
  if (String(request.headers['content-type']).startsWith('application/json')) return JSON.parse(text) as Record<string, string>;
  return Object.fromEntries(new URLSearchParams(text));
}

/** Problems of the parameters against the documented shape (token not checked); empty when valid. */
export function pushoverProblems(request: RecordedRequest): string[] {
  const params = pushoverParams(request);
  const problems: string[] = [];
  if (!/^[A-Za-z0-9]{30}$/.test(params.user ?? '')) problems.push('user identifier is invalid');
  const message = params.message ?? '';
  if (message === '') problems.push('message cannot be blank');
  if (message.length > 1024) problems.push('message is too long');
  if (params.title !== undefined && params.title.length > 250) problems.push('title is too long');
  const priority = params.priority === undefined ? 0 : Number(params.priority);
  if (!Number.isInteger(priority) || priority < -2 || priority > 2) problems.push('priority is invalid');
  if (priority === 2 && !(Number(params.retry) >= 30 && Number(params.expire) > 0 && Number(params.expire) <= 10800)) {
    problems.push('retry and expire parameters must be supplied with emergency priority');
  }
  return problems;
}

function answer(request: RecordedRequest, token: string): ReceiverResponse {
  const request_ = '5042853c-402d-4a18-abcb-168734a801de';
  if (request.method !== 'POST' || request.url !== '/1/messages.json') return { status: 404, body: '{"status":0,"errors":["not found"]}' };
  if (pushoverParams(request).token !== token) {
    return { status: 400, body: JSON.stringify({ token: 'invalid', errors: ['application token is invalid'], status: 0, request: request_ }) };
  }
  const problems = pushoverProblems(request);
  if (problems.length > 0) return { status: 400, body: JSON.stringify({ errors: problems, status: 0, request: request_ }) };
  return { status: 200, body: JSON.stringify({ status: 1, request: request_ }) };
}

/** Starts the receiver; only the application token `token` is accepted. */
export async function startPushoverReceiver(token: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, token));
  return receiver;
}
