import { describe, expect, it } from 'vitest';
import { MIN_EMBEDDED_SECRET_LENGTH, SECRET_MASK, maskSecrets } from '../src/secret-masking.js';

// Issue 41 item 8: a one-character wrong password `e` turned "Access denied" into "Acc***ss d***ni***d".
describe('maskSecrets keeps words and never shows a secret', () => {
  const messages = [
    "Access denied for user 'root'@'localhost' (using password: YES)",
    'WRONGPASS invalid username-password pair or user is disabled.',
    'role "nobody" does not exist',
    'All configured authentication methods failed',
    '530 Login incorrect.',
  ];

  for (const secret of ['e', 's', 'ro', 'ord', 'a1!', 'pass', 'secret7']) {
    it(`a short secret ${JSON.stringify(secret)} (under ${MIN_EMBEDDED_SECRET_LENGTH} characters) leaves words inside them alone`, () => {
      for (const message of messages) expect(maskSecrets(message, [secret])).toBe(message);
    });
  }

  it('masks a short secret wherever it stands as a whole token', () => {
    expect(maskSecrets('login failed for password e', ['e'])).toBe(`login failed for password ${SECRET_MASK}`);
    expect(maskSecrets("password 'abc' rejected", ['abc'])).toBe(`password '${SECRET_MASK}' rejected`);
    expect(maskSecrets('postgres://root:e@host/db?token=ab', ['e', 'ab'])).toBe(`postgres://root:${SECRET_MASK}@host/db?token=${SECRET_MASK}`);
    expect(maskSecrets('e', ['e'])).toBe(SECRET_MASK);
    expect(maskSecrets('e e-e', ['e'])).toBe(`${SECRET_MASK} ${SECRET_MASK}-${SECRET_MASK}`);
  });

  it('a short secret with punctuation at its edge needs no boundary on that side', () => {
    expect(maskSecrets('key=-x; user=a-x', ['-x'])).toBe(`key=${SECRET_MASK}; user=a${SECRET_MASK}`);
  });

  it('masks a long secret everywhere, inside words too', () => {
    const secret = 'hunter2hunter2';
    expect(maskSecrets(`auth ${secret} and x${secret}y`, [secret])).toBe(`auth ${SECRET_MASK} and x${SECRET_MASK}y`);
  });

  it('masks the longer of two overlapping secrets whole, and ignores empty ones', () => {
    expect(maskSecrets('token abcdefghij', ['abc', 'abcdefghij', '', undefined, null])).toBe(`token ${SECRET_MASK}`);
  });

  it('treats letters of any script as word characters', () => {
    expect(maskSecrets('Zugriff verweigert für Benutzer', ['ü'])).toBe('Zugriff verweigert für Benutzer');
  });
});
