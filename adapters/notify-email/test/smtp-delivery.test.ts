import { afterEach, describe, expect, it } from 'vitest';
import { isAdapterError, type NotificationChannel } from '@holdfast/sdk';
import { createAdapterInstance, recordingLogger } from '@holdfast/testkit';
import definition, { renderEmail } from '../src/index.js';
import { selfSignedCertificate, startSmtpReceiver, type SmtpReceiver } from './smtp-receiver.js';

const receivers: SmtpReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(options: Parameters<typeof startSmtpReceiver>[0] = {}): Promise<SmtpReceiver> {
  const started = await startSmtpReceiver(options);
  receivers.push(started);
  return started;
}

function channel(config: Record<string, unknown>, logs: string[] = []): NotificationChannel {
  return createAdapterInstance<NotificationChannel>(
    definition,
    { host: '127.0.0.1', from: 'Holdfast <backup@example.test>', to: 'ops@example.test', timeoutSeconds: 3, ...config },
    { logger: recordingLogger(logs) },
  );
}

const CONTEXT = {
  success: false,
  eventType: 'backup_failure',
  title: 'Backup "nightly" failed',
  color: '#dc2626',
  fields: [
    { name: 'Job', value: 'nightly' },
    { name: 'Size', value: '' },
    { name: 'Error', value: 'role "x" <does not exist>' },
  ],
};

describe('email channel against a real SMTP server', () => {
  it('delivers a plain SMTP message with subject prefix, text and HTML bodies, dashes for empty values', async () => {
    const smtp = await receiver();
    expect(await channel({ port: smtp.port, secure: 'none' }).send('The backup of "nightly" failed.', CONTEXT)).toBe(true);
    expect(smtp.mails).toHaveLength(1);
    const [mail] = smtp.mails;
    expect(mail?.subject).toBe('[Holdfast] Backup "nightly" failed');
    expect(mail?.envelopeTo).toEqual(['ops@example.test']);
    expect(mail?.from).toContain('backup@example.test');
    expect(mail?.isTls).toBe(false);
    expect(mail?.text).toContain('The backup of "nightly" failed.');
    expect(mail?.text).toContain('Job: nightly');
    expect(mail?.text).toContain('Size: -');
    expect(mail?.html).toContain('border-left:6px solid #dc2626');
    expect(mail?.html).toContain('role &quot;x&quot; &lt;does not exist&gt;');
    expect(mail?.html).toMatch(/<th[^>]*>Size<\/th><td[^>]*>-<\/td>/);
  });

  it('upgrades with STARTTLS, trusts the configured CA and logs in', async () => {
    const tls = await selfSignedCertificate();
    const smtp = await receiver({ tls, login: { user: 'mailer', password: 'mailer-pass' } });
    const sent = await channel({ port: smtp.port, secure: 'starttls', tlsCaCertificate: tls.cert, user: 'mailer', password: 'mailer-pass' }).send('hello', { title: 'TLS' });
    expect(sent).toBe(true);
    expect(smtp.mails[0]).toMatchObject({ subject: '[Holdfast] TLS', isTls: true, user: 'mailer' });
  });

  it('fails STARTTLS against an untrusted certificate, and requires STARTTLS when asked', async () => {
    const tls = await selfSignedCertificate();
    const untrusted = await receiver({ tls });
    const logs: string[] = [];
    expect(await channel({ port: untrusted.port, secure: 'starttls' }, logs).send('x')).toBe(false);
    expect(untrusted.mails).toHaveLength(0);
    const plain = await receiver();
    expect(await channel({ port: plain.port, secure: 'starttls' }).send('x')).toBe(false);
    expect(plain.mails).toHaveLength(0);
  });

  it('a wrong password resolves false, and neither result nor log contains it', async () => {
    const smtp = await receiver({ login: { user: 'mailer', password: 'right-one' } });
    const logs: string[] = [];
    const subject = channel({ port: smtp.port, secure: 'none', user: 'mailer', password: 'wrong-secret-77' }, logs);
    expect(await subject.send('x')).toBe(false);
    const result = await subject.test();
    expect(result.success).toBe(false);
    expect(result.message).toContain('rejected the login');
    expect(`${result.message}\n${logs.join('\n')}`).not.toContain('wrong-secret-77');
    expect(smtp.mails).toHaveLength(0);
  });

  it('test() sends a real test message and reports the server', async () => {
    const smtp = await receiver();
    const result = await channel({ port: smtp.port, secure: 'none' }).test();
    expect(result).toEqual({ success: true, message: `Test email accepted by 127.0.0.1:${smtp.port}` });
    expect(smtp.mails[0]?.subject).toBe('[Holdfast] Test notification');
  });

  it('applies defaults and names bad fields', () => {
    const fail = (config: Record<string, unknown>): string => {
      try {
        channel(config);
      } catch (error) {
        if (isAdapterError(error)) return error.message;
        throw error;
      }
      throw new Error('accepted');
    };
    expect(fail({ to: 'nope' })).toContain('to: must be a valid email address');
    expect(fail({ host: ' ' })).toContain('host:');
    expect(fail({ secure: 'tls' })).toContain('secure:');
    expect(definition.configSchema.parse({ host: 'h', from: 'f', to: 'a@b.test' })).toMatchObject({ port: 587, secure: 'starttls' });
  });

  it('renders a line break in a title as a space, never a header break', () => {
    expect(renderEmail('m', { title: 'a\r\nBcc: x@y.test' }).subject).toBe('[Holdfast] a Bcc: x@y.test');
  });
});
