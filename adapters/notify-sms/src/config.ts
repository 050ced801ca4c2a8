import { secret, z } from '@holdfast/sdk';

/** E.164: a plus sign, a country code not starting with 0, at most 15 digits in all. */
const E164 = /^\+[1-9]\d{1,14}$/;
const phoneNumber = (what: string) =>
  z
    .string()
    .trim()
    .min(1)
    .regex(E164, 'must be an E.164 number such as +14155550100')
    .describe(what);

/** Config of the SMS channel (SPEC "Notification channel configurations"), sent through the Twilio Messages API. */
export const smsConfig = z.object({
  accountSid: z.string().trim().min(1).describe('Twilio Account SID (AC…); the user name of the API requests.'),
  authToken: secret(z.string().min(1))
    .optional()
    .describe('Twilio Auth Token. A TOKEN credential profile wins over this field. Stored encrypted.'),
  from: phoneNumber('Sending number in E.164 form (a Twilio number of the account).'),
  to: phoneNumber('Receiving number in E.164 form.'),
  apiUrl: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .default('https://api.twilio.com')
    .describe('Twilio API base URL; change only for a regional edge or a compatible gateway.'),
});

/** Parsed config of {@link smsConfig}. */
export type SmsConfig = z.output<typeof smsConfig>;
