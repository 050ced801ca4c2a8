/**
 * A local receiver following the Twilio Messages API "Create a Message"
 * (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource):
 * `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic auth `AccountSid:AuthToken`, a form-encoded
 * body with E.164 `To` and `From` and a `Body` of 1..1600 characters. Answers like Twilio: 201 with the message
 * resource (or 200 when told to, since SPEC counts both as success), 401 error 20003, 400 errors 21604 / 21211 /
 * 21617, 404 for other paths. It is not Twilio itself: tests never reach api.twilio.com and send no SMS.
 */
import { startHttpReceiver, type HttpReceiver, type RecordedRequest, type ReceiverResponse } from '@holdfast/testkit';

const E164 = /^\+[1-9]\d{1,14}$/;
const twilioError = (status: number, code: number, message: string): ReceiverResponse => ({
  status,
  body: JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }),
});

/** Problems of a request body against the documented shape; empty when it is valid. */
export function messageProblems(request: RecordedRequest): { code: number; message: string }[] {
  if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return [{ code: 21604, message: "A 'To' phone number is required." }];
  const form = new URLSearchParams(request.body.toString('utf8'));
  const problems: { code: number; message: string }[] = [];
  if (!E164.test(form.get('To') ?? '')) problems.push({ code: 21211, message: "Invalid 'To' Phone Number" });
  if (!E164.test(form.get('From') ?? '')) problems.push({ code: 21212, message: "Invalid 'From' Phone Number" });
  const body = form.get('Body') ?? '';
  if (body === '') problems.push({ code: 21602, message: 'Message body is required.' });
  if (body.length > 1600) problems.push({ code: 21617, message: 'The concatenated message body exceeds the 1600 character limit.' });
  return problems;
}

function answer(request: RecordedRequest, sid: string, token: string, status: 200 | 201): ReceiverResponse {
  const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(request.url);
  if (request.method !== 'POST' || !match) return twilioError(404, 20404, 'The requested resource was not found');
  const expected = `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`;
  if (match[1] !== sid || request.headers.authorization !== expected) return twilioError(401, 20003, 'Authenticate');
  const [problem] = messageProblems(request);
  if (problem) return twilioError(400, problem.code, problem.message);
  const form = new URLSearchParams(request.body.toString('utf8'));
  return {
    status,
    body: JSON.stringify({ sid: 'SM0123456789abcdef0123456789abcdef', account_sid: sid, to: form.get('To'), from: form.get('From'), body: form.get('Body'), status: 'queued', num_segments: '1' }),
  };
}

/** A Twilio-like receiver; `answerWith(200)` switches the success status (Twilio itself answers 201). */
export interface TwilioReceiver extends HttpReceiver {
  answerWith(status: 200 | 201): void;
}

/** Starts the receiver; only `sid` with `token` is accepted. */
export async function startTwilioReceiver(sid: string, token: string): Promise<TwilioReceiver> {
  const receiver = await startHttpReceiver();
  let status: 200 | 201 = 201;
  receiver.respondWith((request) => answer(request, sid, token, status));
  return Object.assign(receiver, { answerWith: (next: 200 | 201) => void (status = next) });
}
