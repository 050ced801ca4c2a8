// A real SMTP server in process (smtp-server, plain SMTP, no login) whose messages are parsed with mailparser.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelopeTo: string[];
  subject: string;
  text: string;
  html: string;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then((parsed) => {
        mails.push({
          envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          subject: parsed.subject ?? '',
          text: parsed.text ?? '',
          html: typeof parsed.html === 'string' ? parsed.html : '',
        });
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
