// A real SMTP server in process (smtp-server) that parses what it receives with mailparser, optionally offering
// STARTTLS with a throwaway self-signed certificate and requiring a login.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One received message. */
export interface ReceivedMail {
  envelopeTo: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  isTls: boolean;
  user: string | null;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  /** PEM of the server certificate (when started with TLS). */
  certificate?: string;
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1, made with the system openssl. */
export async function selfSignedCertificate(): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'holdfast-smtp-cert-'));
  try {
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'),
    ]);
    return { key: await readFile(join(dir, 'k.pem'), 'utf8'), cert: await readFile(join(dir, 'c.pem'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function startSmtpReceiver(options: { tls?: { key: string; cert: string }; login?: { user: string; password: string } } = {}): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : { disabledCommands: ['STARTTLS'] }),
    authOptional: !options.login,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.login && auth.username === options.login.user && auth.password === options.login.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid login'));
    },
    onData(stream, session, callback) {
      simpleParser(stream).then((parsed) => {
        mails.push({
          envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          from: parsed.from?.text ?? '',
          subject: parsed.subject ?? '',
          text: parsed.text ?? '',
          html: typeof parsed.html === 'string' ? parsed.html : '',
          isTls: Boolean(session.secure),
          user: typeof session.user === 'string' ? session.user : null,
        });
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    port,
    mails,
    certificate: options.tls?.cert,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
