import type nodemailer from 'nodemailer';
import type { EmailConfig } from '../config.js';
import type { RenderedEmail } from './render.js';

/** Outcome of one delivery; `reason` names host, port and SMTP codes only, never credentials or addresses. */
export type SmtpDelivery = { ok: true; response: string } | { ok: false; reason: string };

function describeFailure(error: unknown, where: string, timeoutSeconds: number): string {
  const { code, responseCode } = (error ?? {}) as { code?: string; responseCode?: number };
  if (code === 'ETIMEDOUT' || code === 'ETIMEOUT') return `${where} did not answer within ${timeoutSeconds} s`;
  if (code === 'EAUTH') return `${where} rejected the login${responseCode ? ` (SMTP ${responseCode})` : ''}`;
  if (code === 'ETLS') return `${where}: TLS negotiation failed (check "secure" and the CA certificate)`;
  if (code === 'ECONNECTION' || code === 'ESOCKET' || code === 'EDNS') return `cannot reach ${where} (${code})`;
  if (responseCode) return `${where} refused the message (SMTP ${responseCode})`;
  return `sending through ${where} failed (${code ?? 'unknown error'})`;
}

/**
 * Sends one email with a fresh connection and resolves an outcome; never rejects. Each SMTP step is bounded by
 * `timeoutSeconds`, and an overall deadline closes the connection should a server drip-feed its answers.
 */
export async function sendEmail(config: EmailConfig, to: string, email: RenderedEmail, timeoutSeconds: number): Promise<SmtpDelivery> {
  const where = `${config.host}:${config.port}`;
  const stepMs = timeoutSeconds * 1000;
  let transport: ReturnType<typeof nodemailer.createTransport> | undefined;
  let deadline: NodeJS.Timeout | undefined;
  try {
    // Loaded by the first send, so a server without an email channel does not carry nodemailer.
    const { default: mailer } = await import('nodemailer');
    transport = mailer.createTransport({
      host: config.host,
      port: config.port,
      secure: config.secure === 'ssl',
      ignoreTLS: config.secure === 'none',
      requireTLS: config.secure === 'starttls',
      auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
      tls: config.tlsCaCertificate ? { ca: config.tlsCaCertificate } : undefined,
      connectionTimeout: stepMs,
      greetingTimeout: stepMs,
      socketTimeout: stepMs,
      dnsTimeout: stepMs,
    });
    const opened = transport;
    const overall = new Promise<SmtpDelivery>((resolve) => {
      deadline = setTimeout(() => {
        opened.close();
        resolve({ ok: false, reason: `${where} did not finish within ${timeoutSeconds * 2} s` });
      }, stepMs * 2);
      deadline.unref();
    });
    const sending = opened
      .sendMail({ from: config.from, to, subject: email.subject, text: email.text, html: email.html })
      .then((info): SmtpDelivery => ({ ok: true, response: String(info.response ?? '').slice(0, 200) }))
      .catch((error: unknown): SmtpDelivery => ({ ok: false, reason: describeFailure(error, where, timeoutSeconds) }));
    return await Promise.race([sending, overall]);
  } catch (error) {
    return { ok: false, reason: describeFailure(error, where, timeoutSeconds) };
  } finally {
    clearTimeout(deadline);
    transport?.close();
  }
}
