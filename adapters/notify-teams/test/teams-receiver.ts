/**
 * A local receiver following the Microsoft Teams Workflows webhook ("Post to a channel when a webhook request is
 * received", https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook)
 * and the Adaptive Card schema: `POST /workflows/{id}/triggers/manual/paths/invoke?...&sig={sig}` with a JSON body
 * `{ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content }] }`, where
 * `content` is an `AdaptiveCard` with a `version` Teams renders (at most 1.5) and a `body` of known elements
 * (TextBlock with non-empty `text`; FactSet with `facts` of string `title`/`value`). Answers like the Workflows
 * trigger: 202 Accepted when valid, 400 `InvalidRequestContent`, 401 `DirectApiAuthorizationRequired` for a wrong
 * `sig`, 404 for other paths. It is not Teams itself: tests never reach Microsoft.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

type Json = Record<string, unknown>;
const COLORS = ['Default', 'Dark', 'Light', 'Accent', 'Good', 'Warning', 'Attention'];

function elementProblems(element: Json, index: number): string[] {
  const at = `body[${index}]`;
  if (element.type === 'TextBlock') {
    const problems = typeof element.text === 'string' && element.text !== '' ? [] : [`${at}.text must be a non-empty string`];
    if (element.color !== undefined && !COLORS.includes(String(element.color))) problems.push(`${at}.color ${String(element.color)} is not an Adaptive Card colour`);
    return problems;
  }
  if (element.type === 'FactSet') {
    const facts = element.facts as Json[] | undefined;
    if (!Array.isArray(facts) || facts.length === 0) return [`${at}.facts must be a non-empty array`];
    return facts.flatMap((fact, i) => (typeof fact.title === 'string' && typeof fact.value === 'string' ? [] : [`${at}.facts[${i}] needs string title and value`]));
  }
  return [`${at}.type ${String(element.type)} is not an element this receiver knows`];
}

/** Problems of a request against the documented shape; empty when it is valid. */
export function teamsProblems(request: RecordedRequest): string[] {
  const problems: string[] = [];
  if (request.method !== 'POST') problems.push(`method ${request.method}, expected POST`);
  if (!String(request.headers['content-type']).startsWith('application/json')) problems.push('content-type is not application/json');
  let body: Json;
  try {
    body = JSON.parse(request.body.toString('utf8')) as Json;
  } catch {
    return [...problems, 'body is not JSON'];
  }
  if (body.type !== 'message') problems.push('type must be "message"');
  const attachments = body.attachments as Json[] | undefined;
  if (!Array.isArray(attachments) || attachments.length === 0) return [...problems, 'attachments must be a non-empty array'];
  for (const [i, attachment] of attachments.entries()) {
    if (attachment.contentType !== 'application/vnd.microsoft.card.adaptive') problems.push(`attachments[${i}].contentType is not an Adaptive Card`);
    const card = attachment.content as Json | undefined;
    if (card?.type !== 'AdaptiveCard') problems.push(`attachments[${i}].content.type must be "AdaptiveCard"`);
    if (typeof card?.version !== 'string' || !/^1\.[0-5]$/.test(card.version)) problems.push(`attachments[${i}].content.version must be 1.0..1.5`);
    if (!Array.isArray(card?.body)) problems.push(`attachments[${i}].content.body must be an array`);
    else (card.body as Json[]).forEach((element, index) => problems.push(...elementProblems(element, index)));
  }
  return problems;
}

function answer(request: RecordedRequest, sig: string): ReceiverResponse {
  const url = new URL(request.url, 'http://receiver');
  if (!/^\/workflows\/[0-9a-f]+\/triggers\/manual\/paths\/invoke$/.test(url.pathname)) return { status: 404, body: '{"error":{"code":"NotFound"}}' };
  if (url.searchParams.get('sig') !== sig) {
    return { status: 401, body: JSON.stringify({ error: { code: 'DirectApiAuthorizationRequired', message: 'The request must be authenticated.' } }) };
  }
  const problems = teamsProblems(request);
  if (problems.length > 0) return { status: 400, body: JSON.stringify({ error: { code: 'InvalidRequestContent', message: problems.join('; ') } }) };
  return { status: 202, body: '' };
}

/** Starts the receiver; only the signature `sig` is accepted. */
export async function startTeamsReceiver(sig: string): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver();
  receiver.respondWith((request) => answer(request, sig));
  return receiver;
}

/** A Workflows-style webhook URL on the receiver. */
export function workflowUrl(base: string, sig: string): string {
  return `${base}/workflows/0af3c1/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=${sig}`;
}
