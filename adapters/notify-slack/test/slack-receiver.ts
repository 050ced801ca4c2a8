/**
 * A local receiver following the Slack incoming-webhook API (https://api.slack.com/messaging/webhooks and the Block
 * Kit reference): `POST /services/{T}/{B}/{token}` with a JSON body holding `text` or `blocks` (at most 50); a
 * `header` needs `plain_text` of at most 150, a `section` needs `text` (at most 3000) or `fields` (1..10 texts of at
 * most 2000), a `context` needs 1..10 elements; `text` objects are `plain_text` or `mrkdwn` with non-empty `text`.
 * Answers like Slack: 200 `ok` (text/html), 400 `invalid_blocks` / `no_text`, 403 `invalid_token`, 404 `no_service`.
 * It is not Slack itself: tests never reach hooks.slack.com.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

type Json = Record<string, unknown>;

function textProblems(text: unknown, where: string, max: number, types = ['plain_text', 'mrkdwn']): string[] {
  const object = text as Json | undefined;
  if (!object || !types.includes(String(object.type))) return [`${where} must be a ${types.join(' or ')} text object`];
  if (typeof object.text !== 'string' || object.text.length < 1 || object.text.length > max) return [`${where}.text must be 1..${max} characters`];
  return [];
}

function blockProblems(block: Json, index: number): string[] {
  const at = `blocks[${index}]`;
  if (block.type === 'header') return textProblems(block.text, `${at}.text`, 150, ['plain_text']);
  if (block.type === 'section') {
    if (block.text === undefined && block.fields === undefined) return [`${at} needs text or fields`];
    const problems = block.text === undefined ? [] : textProblems(block.text, `${at}.text`, 3000);
    if (block.fields !== undefined) {
      if (!Array.isArray(block.fields) || block.fields.length < 1 || block.fields.length > 10) problems.push(`${at}.fields must hold 1..10 items`);
      else block.fields.forEach((field, i) => problems.push(...textProblems(field, `${at}.fields[${i}]`, 2000)));
    }
    return problems;
  }
  if (block.type === 'context') {
    if (!Array.isArray(block.elements) || block.elements.length < 1 || block.elements.length > 10) return [`${at}.elements must hold 1..10 items`];
    return block.elements.flatMap((element, i) => textProblems(element, `${at}.elements[${i}]`, 3000));
  }
  return [`${at}.type ${String(block.type)} is not a block this receiver knows`];
}

/** Problems of a request against the documented shape; empty when it is valid. */
export function slackProblems(request: RecordedRequest): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, expected POST`);
  if (!String(request.headers['content-type']).startsWith('application/json')) problems.push('content-type is not application/json');
  let body: Json;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Json;
  } catch {
    return [...problems, 'body is not JSON'];
  }
  if (typeof body.text !== 'string' && body.blocks === undefined) problems.push('no_text');
  if (body.blocks !== undefined) {
    if (!Array.isArray(body.blocks) || body.blocks.length > 50) problems.push('blocks must be an array of at most 50');
    else (body.blocks as Json[]).forEach((block, index) => problems.push(...blockProblems(block, index)));
  }
  for (const key of ['username', 'channel', 'icon_emoji'] as const) {
    if (body[key] !== undefined && typeof body[key] !== 'string') problems.push(`${key} must be a string`);
  }
  return problems;
}

function answer(request: RecordedRequest, token: string): ReceiverResponse {
  const text = { 'content-type': 'text/html' };
  const parts = request.url.split('/');
  if (parts[1] !== 'services' || parts.length !== 5) return { status: 404, body: 'no_service', headers: text };
  if (parts[4] !== token) return { status: 403, body: 'invalid_token', headers: text };
  const problems = slackProblems(request);
  if (problems.length > 0) return { status: 400, body: problems.includes('no_text') ? 'no_text' : 'invalid_blocks', headers: text };
  return { status: 200, body: 'ok', headers: text };
}

/** Starts the receiver; webhook URLs are `{url}/services/{T}/{B}/{token}` and only `token` is accepted. */
export async function startSlackReceiver(token: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, token));
  return receiver;
}
