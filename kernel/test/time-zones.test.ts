import { describe, expect, it } from 'vitest';
import { isKnownTimeZone } from '../src/time-zones.js';

describe('isKnownTimeZone', () => {
  it('knows UTC and IANA names', () => {
    for (const zone of ['UTC', 'Etc/UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) expect(isKnownTimeZone(zone), zone).toBe(true);
  });

  it('refuses empty, made-up and non-string zones', () => {
    for (const zone of ['', 'Mars/Olympus_Mons', 'Europe/Atlantis', 'not a zone']) expect(isKnownTimeZone(zone), zone).toBe(false);
    expect(isKnownTimeZone(undefined as unknown as string)).toBe(false);
  });
});
