import { describe, expect, it } from 'vitest';
import { namingConfigSchema } from '../src/index.js';
import { naming } from './helpers.js';

const validate = (pattern: string) => naming().validate(pattern);

describe('validate', () => {
  it('accepts the documented patterns', () => {
    for (const pattern of ['{job_name}_yyyy-MM-dd_HH-mm-ss', '{job_name}_{db_name}_{chain}', "'weekly'_yyyy-MM-dd", 'dd MMM yy']) {
      expect(validate(pattern)).toEqual({ ok: true });
    }
  });

  it('rejects an empty or blank pattern', () => {
    expect(validate('')).toEqual({ ok: false, message: 'pattern is empty' });
    expect(validate('   ')).toEqual({ ok: false, message: 'pattern is empty' });
  });

  it('rejects unknown tokens, listing the known ones', () => {
    expect(validate('{job}_yyyy')).toEqual({
      ok: false,
      message: 'pattern is malformed: unknown token "{job}"; known tokens are {job_name}, {db_name}, {chain}',
    });
    expect(validate('{JOB_NAME}_yyyy')).toMatchObject({ ok: false, message: expect.stringContaining('unknown token "{JOB_NAME}"') });
  });

  it('rejects unbalanced braces and quotes with their position', () => {
    expect(validate('yyyy_{job_name')).toEqual({ ok: false, message: 'pattern is malformed: "{" at position 6 is never closed' });
    expect(validate('yyyy}')).toEqual({ ok: false, message: 'pattern is malformed: "}" at position 5 has no opening "{"' });
    expect(validate("yyyy_'open")).toEqual({ ok: false, message: 'pattern is malformed: unterminated quote starting at position 6' });
  });

  it('rejects patterns that can never be unique per run', () => {
    const message = 'pattern has no date token (yyyy, yy, MMM, MM, dd, HH, mm, ss, SSS) and no {chain}, so every run would get the same name';
    expect(validate('{job_name}')).toEqual({ ok: false, message });
    expect(validate("{job_name}_{db_name}_'yyyy'")).toEqual({ ok: false, message });
    expect(validate('{chain}')).toEqual({ ok: true });
  });

  it('rejects path separators', () => {
    expect(validate('{job_name}/yyyy')).toEqual({ ok: false, message: 'pattern contains a path separator ("/"); a name is one file, not a path' });
    expect(validate('a\\b/yyyy')).toEqual({ ok: false, message: 'pattern contains a path separator ("/", "\\"); a name is one file, not a path' });
  });

  it('rejects characters file systems refuse and control characters, naming them', () => {
    expect(validate('yyyy-MM-dd HH:mm')).toEqual({
      ok: false,
      message: 'pattern contains characters not allowed in file names: ":" (use "-" or "_" instead)',
    });
    expect(validate('yyyy\t?')).toEqual({
      ok: false,
      message: 'pattern contains characters not allowed in file names: U+0009, "?" (use "-" or "_" instead)',
    });
  });

  it('rejects patterns longer than 200 characters', () => {
    expect(validate(`yyyy${'x'.repeat(197)}`)).toEqual({ ok: false, message: 'pattern is 201 characters long; the limit is 200' });
    expect(validate(`yyyy${'x'.repeat(196)}`)).toEqual({ ok: true });
  });
});

describe('config', () => {
  it('defaults every option and rejects bad values naming the field', () => {
    expect(namingConfigSchema.parse({})).toEqual({ replacement: '_', maxLength: 200 });
    const issues = (config: unknown) => {
      const result = namingConfigSchema.safeParse(config);
      return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    };
    expect(issues({ replacement: '/' })).toEqual(['replacement: must be "_" or "-"']);
    expect(issues({ maxLength: 300 })).toEqual(['maxLength: must be at most 255 bytes (the file-name limit of common file systems)']);
    expect(issues({ maxLength: 10 })).toEqual(['maxLength: must be at least 32 bytes']);
    expect(issues({ maxLength: '64' })).toEqual(['maxLength: must be a whole number of bytes']);
    expect(issues({ pattern: 'x' })).toEqual([': Unrecognized key: "pattern"']);
  });
});
