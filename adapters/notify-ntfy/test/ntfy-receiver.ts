/**
 * A local receiver following the ntfy publish API ("Publish as JSON", https://docs.ntfy.sh/publish/#publish-as-json):
 * `POST /` with a JSON body holding `topic` (letters, digits, `-`, `_`, at most 64), an optional string `message`
 * and `title`, an integer `priority` 1..5 and a string array `tags`. When built with a token it requires
 * `Authorization: Bearer <token>` and answers 403 like ntfy for anything else. Answers like ntfy: 200 with the
 * message event, 400 with `{ code, http, error }`. It is not ntfy itself: tests never reach the public server.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

/** Problems of a request against the documented shape; empty when it is valid. */
export function ntfyProblems(request: RecordedRequest): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST' && request.method !== 'PUT') problems.push(`method ${request.method}, expected POST or PUT`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return [...problems, 'body is not JSON'];
  }
  if (typeof body.topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(body.topic)) problems.push('topic is missing or invalid');
  if (body.message !== undefined && typeof body.message !== 'string') problems.push('message must be a string');
  if (body.title !== undefined && typeof body.title !== 'string') problems.push('title must be a string');
  const priority = body.priority;
  if (priority !== undefined && !(Number.isInteger(priority) && (priority as number) >= 1 && (priority as number) <= 5)) problems.push('priority must be an integer 1..5');
  if (body.tags !== undefined && !(Array.isArray(body.tags) && body.tags.every((tag) => typeof tag === 'string'))) problems.push('tags must be a string array');
  return problems;
}

function answer(request: RecordedRequest, token: string | undefined): ReceiverResponse {
  if (token !== undefined && request.headers.authorization !== `Bearer ${token}`) {
    return { status: 403, body: JSON.stringify({ code: 40301, http: 403, error: 'forbidden', link: 'https://ntfy.sh/docs/publish/#authentication' }) };
  }
  const problems = ntfyProblems(request);
  if (problems.length > 0) return { status: 400, body: JSON.stringify({ code: 40001, http: 400, error: problems.join('; ') }) };
  const body = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
  return { status: 200, body: JSON.stringify({ id: 'sPs71M8A2T', time: Math.floor(Date.now() / 1000), event: 'message', ...body }) };
}

/** Starts the receiver; with `token`, only that bearer token is accepted. */
export async function startNtfyReceiver(token?: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, token));
  return receiver;
}
