import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveFileVariables } from '../src/env-files.js';

const dir = mkdtempSync(join(tmpdir(), 'holdfast-env-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

describe('resolveFileVariables (container secrets as *_FILE)', () => {
  it('reads HOLDFAST_ADMIN_PASSWORD_FILE and DATABASE_URL_FILE into their variables, one trailing newline removed', () => {
    const env = resolveFileVariables({
      HOLDFAST_ADMIN_PASSWORD_FILE: secretFile('password', 'a long password \n'),
      DATABASE_URL_FILE: secretFile('url', 'postgres://holdfast@db:5432/holdfast\n'),
      PORT: '4000',
    });
    expect(env.HOLDFAST_ADMIN_PASSWORD).toBe('a long password ');
    expect(env.DATABASE_URL).toBe('postgres://holdfast@db:5432/holdfast');
    expect(env.HOLDFAST_ADMIN_PASSWORD_FILE).toBeUndefined();
    expect(env.PORT).toBe('4000');
  });

  it('leaves the environment it was given unchanged', () => {
    const given = { HOLDFAST_ADMIN_PASSWORD_FILE: secretFile('p2', 'x-password') };
    resolveFileVariables(given);
    expect(given).toEqual({ HOLDFAST_ADMIN_PASSWORD_FILE: join(dir, 'p2') });
  });

  it('refuses both forms at once, naming the variable', () => {
    expect(() => resolveFileVariables({ DATABASE_URL: 'postgres://a@b/c', DATABASE_URL_FILE: secretFile('u2', 'postgres://x@y/z') })).toThrow(
      'set DATABASE_URL or DATABASE_URL_FILE, not both',
    );
  });

  it('names an unreadable or empty file without printing any content', () => {
    expect(() => resolveFileVariables({ HOLDFAST_ADMIN_PASSWORD_FILE: join(dir, 'missing') })).toThrow(
      `HOLDFAST_ADMIN_PASSWORD_FILE ${join(dir, 'missing')} cannot be read: ENOENT`,
    );
    expect(() => resolveFileVariables({ DATABASE_URL_FILE: secretFile('empty', '\n') })).toThrow(/DATABASE_URL_FILE .* is empty/);
  });
});
