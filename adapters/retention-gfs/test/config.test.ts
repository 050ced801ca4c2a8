import { describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { retentionPolicySchema, retentionPresets } from '../src/index.js';
import { strategy } from './helpers.js';

/** `path: message` of every issue, as the API would report them. */
function issues(config: unknown): string[] {
  const result = retentionPolicySchema.safeParse(config);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('retention policy config', () => {
  it('accepts the seeded presets and documented shapes unchanged', () => {
    for (const preset of retentionPresets) expect(retentionPolicySchema.parse(preset.config)).toEqual(preset.config);
    expect(retentionPresets.map((p) => p.name)).toEqual(['Keep all', 'Keep last 14', 'GFS 7/4/12/2']);
    expect(retentionPolicySchema.parse({ mode: 'gfs', hourly: 24, daily: 0 })).toEqual({ mode: 'gfs', hourly: 24, daily: 0 });
  });

  it('rejects negative, fractional and non-numeric tiers naming the tier', () => {
    expect(issues({ mode: 'gfs', daily: -1 })).toEqual(['daily: must not be negative']);
    expect(issues({ mode: 'gfs', weekly: 2.5 })).toEqual(['weekly: must be a whole number of weekly (ISO week) periods']);
    expect(issues({ mode: 'gfs', monthly: '12' })).toEqual(['monthly: must be a whole number of monthly periods']);
    expect(issues({ mode: 'gfs', yearly: null })).toEqual(['yearly: must be a whole number of yearly periods']);
    expect(issues({ mode: 'gfs', hourly: Number.NaN })).toEqual(['hourly: must be a whole number of hourly periods']);
    expect(issues({ mode: 'gfs', daily: Number.POSITIVE_INFINITY })).toEqual(['daily: must be a whole number of daily periods']);
  });

  it('rejects a missing or unknown mode', () => {
    expect(issues({})).toEqual(['mode: must be one of "keep-all", "keep-last", "gfs"']);
    expect(issues({ mode: 'grandfather' })).toEqual(['mode: must be one of "keep-all", "keep-last", "gfs"']);
  });

  it('rejects unknown fields (a typo must not silently keep everything)', () => {
    expect(issues({ mode: 'gfs', dayly: 7 })).toEqual([': Unrecognized key: "dayly"']);
  });

  it('rejects fields that belong to another mode', () => {
    expect(issues({ mode: 'keep-all', count: 3 })).toEqual(['count: applies only to mode "keep-last", not "keep-all"']);
    expect(issues({ mode: 'keep-last', count: 3, daily: 7 })).toEqual(['daily: applies only to mode "gfs", not "keep-last"']);
  });

  it('rejects keep-last counts below one and non-integers', () => {
    expect(issues({ mode: 'keep-last', count: 0 })).toEqual(['count: must be at least 1 (use mode "keep-all" to keep everything)']);
    expect(issues({ mode: 'keep-last', count: '14' })).toEqual(['count: must be a whole number of backups']);
  });

  it('turns an invalid policy into a CONFIG error at instantiation, naming the field', () => {
    let caught: unknown;
    try {
      strategy({ mode: 'gfs', daily: -3 });
    } catch (error) {
      caught = error;
    }
    expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
    expect((caught as Error).message).toBe('[retention-gfs] invalid configuration: daily: must not be negative');
  });
});
