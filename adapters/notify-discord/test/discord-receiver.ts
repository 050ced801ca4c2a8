/**
 * A local receiver following the Discord API "Execute Webhook" (https://discord.com/developers/docs/resources/webhook
 * and the embed object with its limits): `POST /api/webhooks/{id}/{token}` with a JSON body holding at least one of
 * `content` or `embeds` (at most 10), each embed with string `title` <= 256, `description` <= 4096, an integer
 * `color` 0..0xFFFFFF, at most 25 `fields` of `name` <= 256 and `value` <= 1024 (both non-empty), a footer text
 * <= 2048, all text together <= 6000; `username` 1..80 without "discord"/"clyde". Answers like Discord: 204 when
 * valid, 400 `{ code: 50035, message: 'Invalid Form Body' }`, 401 `{ code: 50027 }` for a wrong token. It is not
 * Discord itself: tests never reach discord.com.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

type Json = Record<string, unknown>;
const isText = (value: unknown, max: number, min = 0) => typeof value === 'string' && value.length >= min && value.length <= max;

function embedProblems(embed: Json, index: number): string[] {
  const problems: string[] = [];
  const at = `embeds[${index}]`;
  if (embed.title !== undefined && !isText(embed.title, 256)) problems.push(`${at}.title must be a string of at most 256`);
  if (embed.description !== undefined && !isText(embed.description, 4096)) problems.push(`${at}.description must be a string of at most 4096`);
  if (embed.color !== undefined && !(Number.isInteger(embed.color) && (embed.color as number) >= 0 && (embed.color as number) <= 0xffffff)) {
    problems.push(`${at}.color must be an integer 0..16777215`);
  }
  const fields = (embed.fields ?? []) as Json[];
  if (!Array.isArray(fields) || fields.length > 25) problems.push(`${at}.fields must be an array of at most 25`);
  let total = String(embed.title ?? '').length + String(embed.description ?? '').length;
  for (const [i, field] of (Array.isArray(fields) ? fields : []).entries()) {
    if (!isText(field.name, 256, 1)) problems.push(`${at}.fields[${i}].name must be 1..256 characters`);
    if (!isText(field.value, 1024, 1)) problems.push(`${at}.fields[${i}].value must be 1..1024 characters`);
    if (field.inline !== undefined && typeof field.inline !== 'boolean') problems.push(`${at}.fields[${i}].inline must be a boolean`);
    total += String(field.name ?? '').length + String(field.value ?? '').length;
  }
  const footer = embed.footer as Json | undefined;
  if (footer !== undefined && !isText(footer.text, 2048, 1)) problems.push(`${at}.footer.text must be 1..2048 characters`);
  total += String(footer?.text ?? '').length;
  if (total > 6000) problems.push(`${at} holds ${total} characters, more than 6000`);
  if (embed.timestamp !== undefined && Number.isNaN(Date.parse(String(embed.timestamp)))) problems.push(`${at}.timestamp must be ISO 8601`);
  return problems;
}

/** Problems of a request against the documented shape; empty when it is valid. */
export function discordProblems(request: RecordedRequest): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, expected POST`);
  if (!String(request.headers['content-type']).startsWith('application/json')) problems.push('content-type is not application/json');
  let body: Json;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Json;
  } catch {
    return [...problems, 'body is not JSON'];
  }
  if (body.content === undefined && body.embeds === undefined) problems.push('one of content or embeds is required');
  if (body.content !== undefined && !isText(body.content, 2000)) problems.push('content must be at most 2000 characters');
  if (body.username !== undefined && (!isText(body.username, 80, 1) || /discord|clyde/i.test(String(body.username)))) problems.push('username is invalid');
  if (body.avatar_url !== undefined && typeof body.avatar_url !== 'string') problems.push('avatar_url must be a string');
  if (body.embeds !== undefined) {
    if (!Array.isArray(body.embeds) || body.embeds.length > 10) problems.push('embeds must be an array of at most 10');
    else for (const [index, embed] of (body.embeds as Json[]).entries()) problems.push(...embedProblems(embed, index));
  }
  return problems;
}

function answer(request: RecordedRequest, token: string): ReceiverResponse {
  if (!/^\/api\/webhooks\/\d+\/[^/?]+/.test(request.url)) return { status: 404, body: '{"message": "404: Not Found", "code": 0}' };
  if (request.url.split('?')[0]?.split('/')[4] !== token) return { status: 401, body: '{"message": "Invalid Webhook Token", "code": 50027}' };
  const problems = discordProblems(request);
  if (problems.length > 0) return { status: 400, body: JSON.stringify({ message: 'Invalid Form Body', code: 50035, errors: problems }) };
  return { status: 204 };
}

/** Starts the receiver; webhook URLs are `{url}/api/webhooks/{id}/{token}` and only `token` is accepted. */
export async function startDiscordReceiver(token: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, token));
  return receiver;
}
