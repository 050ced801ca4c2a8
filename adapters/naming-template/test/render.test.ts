import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMING_PATTERN } from '../src/index.js';
import { MOMENT, render } from './helpers.js';

describe('tokens', () => {
  it('renders the default pattern', () => {
    expect(DEFAULT_NAMING_PATTERN).toBe('{job_name}_yyyy-MM-dd_HH-mm-ss');
    expect(render(DEFAULT_NAMING_PATTERN)).toBe('Immich_2026-11-19_10-05-09');
  });

  it('renders every date token', () => {
    expect(render('yyyy|yy|MMM|MM|dd|HH|mm|ss|SSS'.replaceAll('|', '_'))).toBe('2026_26_Nov_11_19_10_05_09_042');
  });

  it('renders every field token', () => {
    expect(render('{job_name}.{db_name}.{chain}.yyyy', { databaseName: 'photos', chain: 'inc-3' })).toBe('Immich.photos.inc-3.2026');
  });

  it('pads small values and uses English month names whatever the locale', () => {
    expect(render('yyyy-MM-dd_HH-mm-ss_MMM', { date: new Date('2027-01-02T03:04:05Z') })).toBe('2027-01-02_03-04-05_Jan');
    expect(render('yy', { date: new Date('2005-06-01T00:00:00Z') })).toBe('05');
  });

  it('keeps quoted text literal, with two quotes for a quote', () => {
    expect(render("'daily'_yyyy")).toBe('daily_2026');
    expect(render("dd'dd'_'it''s'")).toBe("19dd_it's");
    expect(render("''yyyy")).toBe("'2026");
  });
});

describe('time zones', () => {
  it('renders the wall-clock time of the given zone', () => {
    expect(render(DEFAULT_NAMING_PATTERN, { timezone: 'Europe/Berlin' })).toBe('Immich_2026-11-19_11-05-09');
    expect(render(DEFAULT_NAMING_PATTERN, { timezone: 'Asia/Kathmandu' })).toBe('Immich_2026-11-19_15-50-09');
    expect(render(DEFAULT_NAMING_PATTERN, { timezone: 'America/Los_Angeles' })).toBe('Immich_2026-11-19_02-05-09');
  });

  it('moves the date across midnight and the year in the zone', () => {
    const newYearUtc = new Date('2026-12-31T23:30:00Z');
    expect(render('yyyy-MM-dd', { date: newYearUtc })).toBe('2026-12-31');
    expect(render('yyyy-MM-dd', { date: newYearUtc, timezone: 'Europe/Berlin' })).toBe('2027-01-01');
  });

  it('follows the Berlin DST changes', () => {
    // 29 Mar 2026 01:30 UTC is 03:30 CEST (02:00-03:00 does not exist); 25 Oct 00:30 and 01:30 UTC are both 02:30.
    expect(render('HH-mm', { date: new Date('2026-03-29T00:30:00Z'), timezone: 'Europe/Berlin' })).toBe('01-30');
    expect(render('HH-mm', { date: new Date('2026-03-29T01:30:00Z'), timezone: 'Europe/Berlin' })).toBe('03-30');
    expect(render('HH-mm', { date: new Date('2026-10-25T00:30:00Z'), timezone: 'Europe/Berlin' })).toBe('02-30');
    expect(render('HH-mm', { date: new Date('2026-10-25T01:30:00Z'), timezone: 'Europe/Berlin' })).toBe('02-30');
  });

  it('rejects an unknown zone and an invalid date with errors naming them', () => {
    expect(() => render(DEFAULT_NAMING_PATTERN, { timezone: 'Europe/Berln' })).toThrow(
      '[naming-template] unknown time zone "Europe/Berln" (expected an IANA name such as Europe/Berlin)',
    );
    expect(() => render(DEFAULT_NAMING_PATTERN, { date: new Date(Number.NaN) })).toThrow('[naming-template] the naming context has no valid date');
  });
});

describe('names that look like date tokens', () => {
  it('keeps job and database names verbatim even when they contain date letters', () => {
    expect(render('{job_name}_yyyy', { jobName: 'backup_yyyy' })).toBe('backup_yyyy_2026');
    expect(render('{job_name}_dd', { jobName: 'MM dd' })).toBe('MM dd_19');
    expect(render('{db_name}_HH', { databaseName: 'ss-mm-HH' })).toBe('ss-mm-HH_10');
    expect(render('{job_name}-{chain}-yyyy', { jobName: 'Immich', chain: 'yy' })).toBe('Immich-yy-2026');
  });
});

describe('the {chain} separator rule', () => {
  it('drops an empty chain with the separator before it', () => {
    expect(render('{job_name}_{chain}_yyyy')).toBe('Immich_2026');
    expect(render('{job_name}-{chain}-yyyy', { chain: '' })).toBe('Immich-2026');
    expect(render('yyyy_{chain}')).toBe('2026');
  });

  it('drops the separator after it when none comes before', () => {
    expect(render('{chain}_{job_name}_yyyy')).toBe('Immich_2026');
    expect(render('{job_name}{chain}-yyyy')).toBe('Immich2026');
  });

  it('drops only the chain when no separator touches it, and only one separator', () => {
    expect(render('yyyy{chain}MM')).toBe('202611');
    expect(render('yyyy__{chain}__MM')).toBe('2026___11');
  });

  it('keeps a non-empty chain and its separators', () => {
    expect(render('{job_name}_{chain}_yyyy', { chain: '4' })).toBe('Immich_4_2026');
  });

  it('applies the same rule to a missing database name', () => {
    expect(render('{job_name}_{db_name}_yyyy')).toBe('Immich_2026');
    expect(render('{job_name}_{db_name}_yyyy', { databaseName: 'main' })).toBe('Immich_main_2026');
  });
});

describe('unsafe characters', () => {
  it('replaces separators, Windows-reserved and control characters in names', () => {
    // The leading ".." goes with the dot-trimming rule below; no separator survives.
    expect(render('{job_name}_yyyy', { jobName: '../../etc/passwd' })).toBe('_.._etc_passwd_2026');
    expect(render('{job_name}_yyyy', { jobName: 'C:\\data<1>|"x"?*' })).toBe('C__data_1___x____2026');
    expect(render('{job_name}_yyyy', { jobName: 'a\u0000b\nc\u007fd\u202Ee' })).toBe('a_b_c_d_e_2026');
  });

  it('uses the configured replacement', () => {
    expect(render('{job_name}_yyyy', { jobName: 'a/b' }, { replacement: '-' })).toBe('a-b_2026');
  });

  it('trims leading and trailing dots and spaces so names are neither hidden nor dropped by Windows', () => {
    expect(render('{chain}{job_name}', { jobName: '..', chain: '1' })).toBe('1');
    expect(render('{job_name}_yyyy', { jobName: ' .hidden' })).toBe('hidden_2026');
    expect(render('{chain}{job_name}', { jobName: '.', chain: '' })).toBe('backup');
  });

  it('keeps unicode names, normalised to NFC', () => {
    expect(render('{job_name}_yyyy', { jobName: 'Fotos-Ärger 📷' })).toBe('Fotos-Ärger 📷_2026');
    const decomposed = render('{job_name}_yyyy', { jobName: 'A\u0308' });
    expect(decomposed).toBe('\u00C4_2026');
    expect(decomposed).toBe(render('{job_name}_yyyy', { jobName: 'Ä' }));
  });

  it('shortens long names to maxLength bytes without touching the date or splitting a character', () => {
    const rendered = render(DEFAULT_NAMING_PATTERN, { jobName: 'ü'.repeat(300) }, { maxLength: 64 });
    expect(rendered.endsWith('_2026-11-19_10-05-09')).toBe(true);
    expect(Buffer.byteLength(rendered)).toBeLessThanOrEqual(64);
    expect(rendered).toBe(`${'ü'.repeat(22)}_2026-11-19_10-05-09`);
  });

  it('refuses to render an invalid pattern, with the validation message', () => {
    expect(() => render('{job}_yyyy')).toThrow('[naming-template] invalid naming pattern: pattern is malformed: unknown token "{job}"');
    expect(MOMENT.toISOString()).toBe('2026-11-19T10:05:09.042Z');
  });
});

describe('very long names', () => {
  it('renders a 100 000-character job name quickly and within the limit', () => {
    const started = performance.now();
    const rendered = render(DEFAULT_NAMING_PATTERN, { jobName: 'x/'.repeat(50_000) });
    expect(Buffer.byteLength(rendered)).toBe(200);
    expect(rendered.endsWith('_2026-11-19_10-05-09')).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
