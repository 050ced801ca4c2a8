/**
 * A local receiver following the Apprise API (https://github.com/caronc/apprise-api, "Persistent storage" and
 * "Stateless" notifications): `POST /notify/{KEY}` or `POST /notify/` with a JSON body holding a non-empty `body`, an
 * optional `title`, a `type` of info/success/warning/failure, a `format` of text/markdown/html and an optional `tag`;
 * stateless requests carry `urls`. Answers like the server's views: 200 "Notification(s) sent.", 400 for an invalid
 * payload, 204 when there is nothing to notify (unknown key, no URLs), 424 when a service fails (simulated for
 * URLs starting with `fail://`). It is not Apprise itself: no Apprise server runs here and nothing is forwarded.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

type Json = Record<string, unknown>;
const TYPES = ['info', 'success', 'warning', 'failure'];
const FORMATS = ['text', 'markdown', 'html'];

/** Problems of a request body against the documented shape; empty when it is valid. */
export function appriseProblems(request: RecordedRequest): string[] {
  if (!String(request.headers['content-type']).startsWith('application/json')) return ['The message format is not supported.'];
  let body: Json;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Json;
  } catch {
    return ['Invalid JSON specified.'];
  }
  const problems: string[] = [];
  if (typeof body.body !== 'string' || body.body === '') problems.push('body is required');
  if (body.title !== undefined && typeof body.title !== 'string') problems.push('title must be a string');
  if (body.type !== undefined && !TYPES.includes(String(body.type))) problems.push('type is invalid');
  if (body.format !== undefined && !FORMATS.includes(String(body.format))) problems.push('format is invalid');
  if (body.tag !== undefined && typeof body.tag !== 'string') problems.push('Unsupported characters found in tag definition.');
  return problems;
}

function answer(request: RecordedRequest, keys: readonly string[]): ReceiverResponse {
  const text = { 'content-type': 'text/plain' };
  const match = /^\/notify\/([\w-]{1,128})?$/.exec(request.url);
  if (request.method !== 'POST' || !match) return { status: 404, body: 'Not Found', headers: text };
  const problems = appriseProblems(request);
  if (problems.length > 0) return { status: 400, body: problems.join('; '), headers: text };
  const body = JSON.parse(request.body.toString('utf8')) as Json;
  const key = match[1];
  if (key !== undefined && !keys.includes(key)) return { status: 204 };
  if (key === undefined) {
    const urls = String(body.urls ?? '').split(/[\s,]+/).filter((url) => /^[a-z0-9]+:\/\//i.test(url));
    if (urls.length === 0) return { status: 204 };
    if (urls.some((url) => url.startsWith('fail://'))) return { status: 424, body: 'One or more notification could not be sent.', headers: text };
  }
  return { status: 200, body: 'Notification(s) sent.', headers: text };
}

/** Starts the receiver; `keys` are the configuration keys saved on this "server". */
export async function startAppriseReceiver(keys: readonly string[]): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, keys));
  return receiver;
}
