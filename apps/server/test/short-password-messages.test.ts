// Issue 41 item 8: with a one-character wrong password (`e`) test-connection answered "Acc***ss d***ni***d for
// us***r 'root'" (MariaDB): secret masking replaced letters inside words. Each real server here is tested through the
// API with 1- to 3-character wrong passwords: the answer keeps the server's words and never shows the password.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceState, startAdminServer } from './support/admin-server.js';
import type { Caller, FullServer } from './support/full-server.js';

/** Letters a masked password left in the middle of a word: "Acc***ss". */
const MASK_INSIDE_WORD = /[\p{L}\p{N}]\*\*\*|\*\*\*[\p{L}\p{N}]/u;

/** Passwords short enough to occur inside most words of an error message. */
const SHORT_PASSWORDS = ['e', 'ss', 'ord'];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Case {
  type: 'database' | 'storage';
  adapterId: string;
  config: (password: string) => Record<string, unknown>;
  /** The server's own words that must reach the user intact. */
  words: RegExp;
}

describe('test-connection with a 1- to 3-character wrong password keeps the message readable', () => {
  let server: FullServer;
  let admin: Caller;
  const cases: Record<string, Case> = {};

  beforeAll(async () => {
    const [maria, redis, sshd, ftp, smb, dav, rgw] = await Promise.all(
      ['mariadb', 'redis', 'sshd', 'vsftpd', 'samba', 'webdav', 'ceph-rgw'].map((name) => serviceState(name)),
    );
    Object.assign(cases, {
      postgres: { type: 'database', adapterId: 'postgres', config: (password) => ({ host: '127.0.0.1', port: 5432, user: 'hf_no_such_role', password }), words: /role "hf_no_such_role" does not exist/ },
      mysql: { type: 'database', adapterId: 'mysql', config: (password) => ({ host: maria.host, port: maria.port, user: 'root', password }), words: /Access denied for user 'root'/ },
      redis: { type: 'database', adapterId: 'redis', config: (password) => ({ host: redis.host, port: redis.port, username: 'hf_nobody', password }), words: /WRONGPASS invalid username-password pair/ },
      sftp: { type: 'storage', adapterId: 'sftp', config: (password) => ({ host: sshd.host, port: sshd.port, username: sshd.user, password, root: '/tmp' }), words: /authentication/i },
      ftp: { type: 'storage', adapterId: 'ftp', config: (password) => ({ host: ftp.host, port: ftp.port, username: ftp.user, password, secure: 'none', root: 'backups' }), words: /Login incorrect/i },
      smb: { type: 'storage', adapterId: 'smb', config: (password) => ({ host: smb.host, port: smb.port, share: smb.share, username: smb.user, password }), words: /LOGON_FAILURE|logon failure|access denied/i },
      webdav: { type: 'storage', adapterId: 'webdav', config: (password) => ({ url: dav.basicUrl, username: dav.user, password }), words: /401|unauthori[sz]ed/i },
      s3: { type: 'storage', adapterId: 's3', config: (password) => ({ preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, bucket: 'hf-short-password', accessKeyId: rgw.accessKeyId, secretAccessKey: password }), words: /signature/i },
    } satisfies Record<string, Case>);
    ({ server, admin } = await startAdminServer('sqlite'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  for (const name of ['postgres', 'mysql', 'redis', 'sftp', 'ftp', 'smb', 'webdav', 's3']) {
    it(`${name}: the server's words survive, the password never appears`, async () => {
      const testCase = cases[name]!;
      for (const password of SHORT_PASSWORDS) {
        const answer = await server.call('POST', '/api/adapters/test-connection', admin, {
          type: testCase.type,
          adapterId: testCase.adapterId,
          config: testCase.config(password),
        });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        const message: string = answer.body.message;
        expect(answer.body.success, message).toBe(false);
        expect(message, `password ${JSON.stringify(password)}`).toMatch(testCase.words);
        expect(message, `password ${JSON.stringify(password)}`).not.toMatch(MASK_INSIDE_WORD);
        // A short password is never echoed on its own.
        expect(message).not.toMatch(new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(password)}(?![\\p{L}\\p{N}_])`, 'u'));
      }
    }, 90_000);
  }
});
