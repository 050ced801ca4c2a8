/**
 * A local receiver following the Telegram Bot API `sendMessage` (https://core.telegram.org/bots/api#sendmessage):
 * `POST /bot{token}/sendMessage` with a JSON body holding `chat_id` (integer or string) and `text` (1..4096 visible
 * characters after entity parsing), optional `parse_mode` (MarkdownV2, HTML, Markdown) whose markup must parse,
 * boolean `disable_notification`, integer `message_thread_id`. Answers like the Bot API: 200 `{ ok: true, result }`,
 * 400 `{ ok: false, error_code: 400, description: "Bad Request: can't parse entities: ..." }`, 401 `Unauthorized`
 * for another token, 404 `Not Found` for other paths. It is not Telegram itself: tests never reach api.telegram.org.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';
import { PARSERS } from './telegram-entities.js';

type Json = Record<string, unknown>;
const failure = (status: number, description: string): ReceiverResponse => ({ status, body: JSON.stringify({ ok: false, error_code: status, description }) });

/** Problems of a `sendMessage` body against the documented shape; empty when it is valid. */
export function sendMessageProblems(request: RecordedRequest): string[] {
  let body: Json;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Json;
  } catch {
    return ['body is not JSON'];
  }
  const problems: string[] = [];
  if (!(typeof body.chat_id === 'string' || Number.isInteger(body.chat_id))) problems.push('chat_id is required');
  if (typeof body.text !== 'string' || body.text === '') return [...problems, 'message text is empty'];
  let visible = body.text;
  if (body.parse_mode !== undefined) {
    const parse = PARSERS[String(body.parse_mode)];
    if (!parse) problems.push(`unsupported parse_mode ${String(body.parse_mode)}`);
    else {
      const parsed = parse(body.text);
      if (!parsed.ok) problems.push(`can't parse entities: ${parsed.problem}`);
      else visible = parsed.visible;
    }
  }
  if ([...visible].length > 4096) problems.push('message is too long');
  if (body.disable_notification !== undefined && typeof body.disable_notification !== 'boolean') problems.push('disable_notification must be a boolean');
  if (body.message_thread_id !== undefined && !Number.isInteger(body.message_thread_id)) problems.push('message_thread_id must be an integer');
  return problems;
}

function answer(request: RecordedRequest, token: string): ReceiverResponse {
  const match = /^\/bot([^/]+)\/sendMessage$/.exec(request.url);
  if (!match) return failure(404, 'Not Found');
  if (match[1] !== token) return failure(401, 'Unauthorized');
  if (!String(request.headers['content-type']).startsWith('application/json')) return failure(400, 'Bad Request: message text is empty');
  const problems = sendMessageProblems(request);
  if (problems.length > 0) return failure(400, `Bad Request: ${problems[0]}`);
  const body = JSON.parse(request.body.toString('utf8')) as Json;
  return { status: 200, body: JSON.stringify({ ok: true, result: { message_id: 7, date: Math.floor(Date.now() / 1000), chat: { id: body.chat_id }, text: body.text } }) };
}

/** Starts the receiver; only `token` is accepted. */
export async function startTelegramReceiver(token: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, token));
  return receiver;
}
