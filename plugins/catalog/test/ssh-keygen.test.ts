import ssh2 from 'ssh2';
import { describe, expect, it } from 'vitest';
import { generateSshKey } from '../src/credentials/ssh-keygen.js';

// ssh2 writes about one Ed25519 key in 250 that its own parser refuses; 1,500 keys meet such a key almost surely
// (0.996^1500 is 0.2 %), so this fails if the generator stops checking what it hands out.
describe('generated SSH keys', () => {
  it('every generated Ed25519 key reads back with the parser the SFTP adapter signs in with', async () => {
    const unreadable: string[] = [];
    for (let index = 0; index < 1500; index++) {
      const key = await generateSshKey('ed25519', undefined, 'keygen test');
      const parsed = ssh2.utils.parseKey(key.privateKey);
      if (parsed instanceof Error) unreadable.push(parsed.message);
    }
    expect(unreadable).toEqual([]);
  }, 60_000);
});
