// Issue 17 acceptance 5 (secret-leak scan) through the assembled server: TOTP secrets and backup codes are sealed
// with the real system key (the catalog's SecretBox behind TOKENS.SecretSealer), and after enrollment no response
// of any readable route, nor of the sign-in steps, carries the secret, a backup code, its hash or the sealed text.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKeyText, SecretBox, SYSTEM_KEY_FILE } from '@holdfast/catalog';
import { TOKENS } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type Answer, type Caller, type FullServer } from './support/full-server.js';

/** RFC 6238 (HMAC-SHA1, 6 digits, 30 s) on node:crypto: independent of the server's TOTP library. */
function totp(secretBase32: string, step: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of secretBase32.replace(/=+$/, '')) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
const stepNow = () => Math.floor(Date.now() / 30_000);

describe.each(['sqlite', 'postgresql'] as const)('TOTP secrets never leave the server on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('seals with the system key and answers no secret, code, hash or sealed value after enrollment', async () => {
    const started = await server.call('POST', '/api/auth/two-factor/enroll', admin, {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const secret = new URL(started.body.otpauthUri).searchParams.get('secret')!;
    // Wait out the end of a step so the code is judged in the step it was made for.
    if (30_000 - (Date.now() % 30_000) < 4000) await new Promise((resolve) => setTimeout(resolve, 4100));
    const confirmed = await server.call('POST', '/api/auth/two-factor/confirm', admin, { code: totp(secret, stepNow()) });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const backupCodes = confirmed.body.backupCodes as string[];

    const knex = (server.handle.container.resolve(TOKENS.Database).em() as { getKnex(): (table: string) => { select(): Promise<Array<Record<string, string>>> } }).getKnex();
    const [row] = await knex('two_factors').select();
    const box = new SecretBox(parseKeyText(readFileSync(join(server.dataDir, SYSTEM_KEY_FILE), 'utf8'), 'key'));
    expect(SecretBox.isSealed(row!.secret)).toBe(true);
    expect(box.open(row!.secret!)).toBe(secret);
    const hashes = JSON.parse(box.open(row!.backup_codes!)) as string[];
    expect(hashes).toHaveLength(10);

    const seen: Answer[] = [];
    const pending = await fetch(`${server.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const pendingBody = (await pending.json()) as { twoFactorRequired?: boolean };
    expect(pendingBody.twoFactorRequired).toBe(true);
    const pendingCookie = pending.headers.get('set-cookie')!.split(';')[0]!;
    const verified = await server.call('POST', '/api/auth/two-factor/verify', { cookie: pendingCookie }, { backupCode: backupCodes[0] });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    seen.push({ status: pending.status, body: pendingBody, headers: pending.headers }, verified);

    const document = (await server.call('GET', '/api/openapi.json', admin)).body as { paths: Record<string, Record<string, unknown>> };
    const readable = Object.entries(document.paths).filter(([path, methods]) => methods.get && !path.includes('{')).map(([path]) => path);
    expect(readable).toContain('/api/auth/two-factor');
    for (const path of readable) {
      if (/events|download|stream/.test(path)) continue;
      seen.push(await server.call('GET', path, admin));
    }
    expect(seen.length).toBeGreaterThan(20);
    const texts = seen.map((answer) => `${JSON.stringify(answer.body)} ${JSON.stringify([...answer.headers])}`);
    const forbidden = [secret, started.body.manualKey, row!.secret!, row!.backup_codes!, ...hashes, ...backupCodes, ...backupCodes.map((code) => code.replace('-', ''))];
    const leaks = texts.flatMap((text, index) => forbidden.filter((value) => text.includes(value)).map(() => `${index}`));
    expect(leaks).toEqual([]);
    expect((await server.call('GET', '/api/auth/two-factor', admin)).body).toEqual({ enabled: true, enrollmentPending: false, backupCodesRemaining: 9 });
  }, 120_000);
});
