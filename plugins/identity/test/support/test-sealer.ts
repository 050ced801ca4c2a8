// A real AES-256-GCM sealer under a random per-test key, standing in for the catalog's system-key SecretBox
// (the identity tests run without the catalog plugin). Output format `t1:<iv>:<body>` so tests can tell it apart.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretSealer } from '@holdfast/kernel';

export function testSealer(key = randomBytes(32)): SecretSealer {
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `t1:${iv.toString('base64')}:${body.toString('base64')}`;
    },
    open(sealed) {
      const [tag, ivText, bodyText] = sealed.split(':');
      if (tag !== 't1' || !ivText || !bodyText) throw new Error('not sealed by the test sealer');
      const body = Buffer.from(bodyText, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64'));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
    },
  };
}
