import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM script without type declarations
import { completeLockfile, missingOptionalEntries } from '../scripts/complete-lockfile.mjs';

const lockPath = new URL('../../package-lock.json', import.meta.url);

describe('package-lock.json', () => {
  it('has an entry for every optional dependency, so `npm ci` accepts it (run `npm run lock:complete`)', () => {
    const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
    expect(missingOptionalEntries(lock).map(([path]: [string]) => path)).toEqual([]);
  });

  it('completeLockfile adds a minimal optional entry for a missing platform build', () => {
    const lock = {
      packages: {
        '': { name: 'root' },
        'node_modules/tool': { version: '1.0.0', dev: true, optionalDependencies: { '@tool/linux': '1.0.0', '@tool/darwin': '1.0.0' } },
        'node_modules/@tool/linux': { version: '1.0.0', optional: true },
      },
    };
    expect(completeLockfile(lock)).toBe(1);
    expect(lock.packages).toHaveProperty(['node_modules/@tool/darwin'], { version: '1.0.0', optional: true, dev: true });
    expect(Object.keys(lock.packages)[0]).toBe('');
    expect(missingOptionalEntries(lock)).toEqual([]);
  });
});
