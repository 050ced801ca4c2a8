/**
 * A local receiver following the Gotify API (`POST /message`, https://gotify.net/api-docs): it requires the
 * application token in `X-Gotify-Key` (or `?token=`), a JSON body with a non-empty `message`, an optional string
 * `title`, an integer `priority` and an object `extras`, and answers like Gotify (200 with the stored message, 401
 * without a token, 400 for an invalid body). It is not Gotify itself: no Gotify server can run here.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

/** Problems of a request against the documented shape; empty when it is valid. */
export function gotifyProblems(request: RecordedRequest): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, expected POST`);
  if (!request.url.split('?')[0]?.endsWith('/message')) problems.push(`path ${request.url}, expected …/message`);
  if (!String(request.headers['content-type']).startsWith('application/json')) problems.push('content-type is not application/json');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return [...problems, 'body is not JSON'];
  }
  if (typeof body.message !== 'string' || body.message === '') problems.push('message must be a non-empty string');
  if (body.title !== undefined && typeof body.title !== 'string') problems.push('title must be a string');
  if (body.priority !== undefined && !Number.isInteger(body.priority)) problems.push('priority must be an integer');
  if (body.extras !== undefined && (typeof body.extras !== 'object' || body.extras === null)) problems.push('extras must be an object');
  return problems;
}

function answer(request: RecordedRequest, token: string): ReceiverResponse {
  const given = request.headers['x-gotify-key'] ?? new URL(request.url, 'http://x').searchParams.get('token');
  if (given !== token) {
    return { status: 401, body: JSON.stringify({ error: 'Unauthorized', errorCode: 401, errorDescription: 'you need to provide a valid access token or user credentials to access this api' }) };
  }
  const problems = gotifyProblems(request);
  if (problems.length > 0) return { status: 400, body: JSON.stringify({ error: 'Bad Request', errorCode: 400, errorDescription: problems.join('; ') }) };
  const body = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
  return { status: 200, body: JSON.stringify({ id: 1, appid: 1, date: new Date().toISOString(), ...body }) };
}

/** Starts the receiver; only `token` is accepted. */
export async function startGotifyReceiver(token: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, token));
  return receiver;
}
