import { describe, expect, it } from 'vitest';
import { freeNameCandidates, pickFreeName, pickFreeNameAsync, splitExtension } from '../src/naming-suffix.js';

describe('splitExtension', () => {
  it('keeps a compound extension together and leaves dots inside the name in the stem', () => {
    expect(splitExtension('Immich_2026-11-19_10-00-00.sql.gz.enc')).toEqual({
      stem: 'Immich_2026-11-19_10-00-00',
      extension: '.sql.gz.enc',
    });
    expect(splitExtension('my.app_2026-01-01.tar')).toEqual({ stem: 'my.app_2026-01-01', extension: '.tar' });
    expect(splitExtension('plain')).toEqual({ stem: 'plain', extension: '' });
    expect(splitExtension('.gz')).toEqual({ stem: '.gz', extension: '' });
  });
});

describe('pickFreeName', () => {
  it('returns the name itself when it is free', () => {
    expect(pickFreeName('a.sql.gz', () => false)).toBe('a.sql.gz');
  });

  it('adds the first free numeric suffix before the extension', () => {
    const taken = new Set(['job_2026.sql.gz', 'job_2026-1.sql.gz', 'job_2026-2.sql.gz']);
    expect(pickFreeName('job_2026.sql.gz', (name) => taken.has(name))).toBe('job_2026-3.sql.gz');
  });

  it('uses an explicit extension and rejects one the name does not end with', () => {
    const taken = new Set(['v1.2.dump']);
    expect(pickFreeName('v1.2.dump', (name) => taken.has(name), { extension: '.dump' })).toBe('v1.2-1.dump');
    expect(pickFreeName('name', (name) => name === 'name', { extension: '' })).toBe('name-1');
    expect(() => pickFreeName('name.sql', () => false, { extension: '.gz' })).toThrow(/does not end with the extension ".gz"/);
  });

  it('gives up with a message naming the file after maxAttempts', () => {
    expect(() => pickFreeName('full.tar', () => true, { maxAttempts: 3 })).toThrow(
      'No free name for "full.tar": it and 3 suffixed variants already exist',
    );
    expect([...freeNameCandidates('full.tar', { maxAttempts: 2 })]).toEqual(['full.tar', 'full-1.tar', 'full-2.tar']);
  });
});

describe('pickFreeNameAsync', () => {
  it('awaits the predicate and asks one name at a time', async () => {
    const asked: string[] = [];
    const result = await pickFreeNameAsync('b.gz', async (name) => {
      asked.push(name);
      return name !== 'b-2.gz';
    });
    expect(result).toBe('b-2.gz');
    expect(asked).toEqual(['b.gz', 'b-1.gz', 'b-2.gz']);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    const pending = pickFreeNameAsync('c.gz', async () => {
      controller.abort();
      return true;
    }, { signal: controller.signal });
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
