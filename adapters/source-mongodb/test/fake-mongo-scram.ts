/**
 * SCRAM-SHA-256 server side of the FAKE MongoDB server (RFC 5802 / RFC 7677, as MongoDB's saslStart/saslContinue
 * use it). Only what a test needs: one user, plain ASCII passwords (SASLprep is the identity for them).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Binary, type Document } from 'mongodb';

const ITERATIONS = 4096;
const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();

interface Conversation {
  clientFirstBare: string;
  serverFirst: string;
  nonce: string;
}

export class ScramServer {
  private readonly salt = randomBytes(16);
  private readonly conversations = new Map<number, Conversation>();
  private nextId = 1;

  constructor(private readonly user: string, private readonly password: string) {}

  /** saslStart: answers the client-first message, or refuses an unknown user. */
  start(body: Document): Document {
    const clientFirst = textOf(body.payload as Binary);
    const clientFirstBare = clientFirst.replace(/^n,,/, '');
    const fields = Object.fromEntries(clientFirstBare.split(',').map((part) => [part[0], part.slice(2)]));
    if (body.mechanism !== 'SCRAM-SHA-256' || fields.n !== this.user) return refused();
    const nonce = `${fields.r}${randomBytes(18).toString('base64')}`;
    const serverFirst = `r=${nonce},s=${this.salt.toString('base64')},i=${ITERATIONS}`;
    const id = this.nextId++;
    this.conversations.set(id, { clientFirstBare, serverFirst, nonce });
    return { conversationId: id, done: false, payload: new Binary(Buffer.from(serverFirst)), ok: 1 };
  }

  /** saslContinue: checks the client proof and signs the exchange; a later, empty continue just ends it. */
  continue(body: Document): Document {
    const id = Number(body.conversationId);
    const conversation = this.conversations.get(id);
    if (!conversation) return { conversationId: id, done: true, payload: new Binary(Buffer.alloc(0)), ok: 1 };
    this.conversations.delete(id);
    const clientFinal = textOf(body.payload as Binary);
    const withoutProof = clientFinal.replace(/,p=[^,]*$/, '');
    const proof = Buffer.from(clientFinal.match(/,p=([^,]*)$/)?.[1] ?? '', 'base64');
    if (!withoutProof.includes(`r=${conversation.nonce}`)) return refused();
    const salted = pbkdf2Sync(this.password, this.salt, ITERATIONS, 32, 'sha256');
    const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
    const authMessage = `${conversation.clientFirstBare},${conversation.serverFirst},${withoutProof}`;
    const signature = hmac(storedKey, authMessage);
    if (proof.length !== signature.length) return refused();
    const clientKey = Buffer.from(proof.map((byte, i) => byte ^ signature[i]!));
    if (!timingSafeEqual(createHash('sha256').update(clientKey).digest(), storedKey)) return refused();
    const serverSignature = hmac(hmac(salted, 'Server Key'), authMessage).toString('base64');
    // The driver asks for skipEmptyExchange, so the exchange ends here (no empty third round).
    return { conversationId: id, done: true, payload: new Binary(Buffer.from(`v=${serverSignature}`)), ok: 1 };
  }
}

function refused(): Document {
  return { ok: 0, code: 18, codeName: 'AuthenticationFailed', errmsg: 'Authentication failed.' };
}

/** A Binary's bytes: its buffer may be larger than what was written (`position`). */
function textOf(binary: Binary): string {
  return Buffer.from(binary.buffer.subarray(0, binary.position)).toString('utf8');
}
