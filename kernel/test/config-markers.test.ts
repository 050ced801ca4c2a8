// The config markers behind issues 10.1 and 10.2: which fields say where secrets go, and which are local paths.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { localPath, localPathFieldsOf, secret, secretTarget, secretTargetFieldsOf } from '../src/config-markers.js';

describe('secretTargetFieldsOf', () => {
  it('answers the fields marked secretTarget, through optional and default wrappers', () => {
    const schema = z.object({
      endpoint: secretTarget(z.string()).describe('where'),
      mirror: secretTarget(z.string().optional()),
      host: z.string().default('h'),
      token: secret(z.string()),
    });
    expect(secretTargetFieldsOf(schema)).toEqual(['endpoint', 'mirror']);
  });

  it('guesses by name when a schema marks none', () => {
    const schema = z.object({ host: z.string(), port: z.number(), smtpHost: z.string(), gotifyUrl: z.string(), user: z.string(), password: secret(z.string()), bucket: z.string() });
    expect(secretTargetFieldsOf(schema)).toEqual(['host', 'port', 'smtpHost', 'gotifyUrl', 'bucket']);
  });
});

describe('localPathFieldsOf', () => {
  it('answers the local path fields with their use', () => {
    const schema = z.object({
      path: localPath(z.string().describe('root'), 'storage'),
      paths: localPath(z.array(z.string()), 'source'),
      name: z.string(),
    });
    expect(localPathFieldsOf(schema)).toEqual([
      { field: 'path', use: 'storage' },
      { field: 'paths', use: 'source' },
    ]);
  });
});
