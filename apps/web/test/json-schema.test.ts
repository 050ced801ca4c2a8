import { describe, expect, it } from 'vitest';
import { isAdvancedField } from '../src/schema-form/advanced-fields.js';
import { initialValues, issuesByField, labelOf, pruneEmpty, validatorFor, type JsonSchema } from '../src/schema-form/json-schema.js';

// The shape of a storage adapter's config schema (SFTP), as GET /api/adapters/types serves it.
const SFTP: JsonSchema = {
  type: 'object',
  properties: {
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 1, maximum: 65535, default: 22 },
    password: { type: 'string', secret: true },
    root: { type: 'string', minLength: 1 },
    ssh: { type: 'object', properties: { host: { type: 'string' } }, required: ['host'] },
  },
  required: ['host', 'root', 'password'],
};

describe('forms from an adapter JSON Schema', () => {
  it('validates with zod built from the schema and names the failing fields', () => {
    const result = validatorFor(SFTP, new Set()).safeParse({ host: '', port: 70000 });
    expect(result.success).toBe(false);
    const issues = issuesByField(result.error!);
    expect(Object.keys(issues).sort()).toEqual(['host', 'password', 'port', 'root']);
  });

  it('does not require a secret that is already stored (left empty, the server keeps it)', () => {
    const values = pruneEmpty({ host: 'backup.example', port: 22, password: '', root: '/srv' });
    expect(values).toEqual({ host: 'backup.example', port: 22, root: '/srv' });
    expect(validatorFor(SFTP, new Set(['password'])).safeParse(values).success).toBe(true);
    expect(validatorFor(SFTP, new Set()).safeParse(values).success).toBe(false);
  });

  it('drops empty nested objects so an unused optional section is not sent', () => {
    expect(pruneEmpty({ host: 'h', ssh: { host: '' }, tags: [] })).toEqual({ host: 'h' });
  });

  it('starts from the defaults, with stored values on top, and labels fields readably', () => {
    expect(initialValues(SFTP, { host: 'stored' })).toEqual({ port: 22, host: 'stored' });
    expect(labelOf('maintenanceDatabase', {})).toBe('Maintenance database');
    expect(labelOf('hostKeySha256', {})).toBe('Host key SHA-256');
  });
});

describe('advanced settings of an adapter form (issue 47, item 6)', () => {
  const advancedOf = (names: string[], required: string[] = []) => names.filter((name) => isAdvancedField(name, { type: 'string' }, required.includes(name)));

  it('puts timeouts, sizes, restore switches, tool and API locations, TLS details and SSH under Advanced', () => {
    expect(advancedOf(['connectTimeoutSeconds', 'keepaliveSeconds', 'partSizeMiB', 'fragmentSizeKiB', 'parallelParts', 'restoreClean', 'binDirectory', 'apiBaseUrl', 'tlsCa', 'rejectUnauthorized', 'ssh', 'sshPassword'])).toHaveLength(12);
  });

  it('keeps what people set every time in view: where, who, what', () => {
    expect(advancedOf(['host', 'port', 'user', 'username', 'password', 'root', 'path', 'bucket', 'database', 'paths', 'url', 'webhookUrl', 'to', 'from', 'topic'])).toEqual([]);
  });

  it('never hides a required field, and the schema has the last word when it says', () => {
    expect(advancedOf(['backupDirectory'], ['backupDirectory'])).toEqual([]);
    expect(isAdvancedField('region', { type: 'string', advanced: true }, false)).toBe(true);
    expect(isAdvancedField('connectTimeoutSeconds', { type: 'integer', advanced: false }, false)).toBe(false);
  });
});
