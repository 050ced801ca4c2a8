import assert from 'node:assert/strict';
import { type NamingContext, type NamingStrategy } from '@holdfast/sdk';
import fc from 'fast-check';
import { registerChecks, type ConformanceCheck } from './checks.js';
import { createAdapterInstance } from './helpers/instantiate.js';

/** Options of {@link describeNamingStrategy}. */
export interface NamingSuiteOptions {
  /** The adapter's default export. */
  definition: unknown;
  /** Valid patterns (the default pattern among them); every property is checked against each. */
  patterns: readonly string[];
  /** Patterns `validate` must reject (the empty pattern is always checked). */
  invalidPatterns?: readonly string[];
  /** Adapter config (default `{}`). */
  config?: unknown;
  /** Fragments mixed into fuzzed patterns, such as the strategy's tokens (default: the given patterns' pieces). */
  patternFragments?: readonly string[];
  /** fast-check runs per property (default 100). */
  numRuns?: number;
  /** Fixed fast-check seed, to replay a failure. */
  seed?: number;
}

/** Zones with one fixed offset since long before 2000 (no DST), so wall-clock equivalence is exact. */
export const FIXED_OFFSET_ZONES: ReadonlyArray<{ zone: string; offsetMinutes: number }> = [
  { zone: 'Asia/Kathmandu', offsetMinutes: 5 * 60 + 45 },
  { zone: 'Asia/Kolkata', offsetMinutes: 5 * 60 + 30 },
  { zone: 'Pacific/Kiritimati', offsetMinutes: 14 * 60 },
  { zone: 'Etc/GMT+10', offsetMinutes: -10 * 60 },
];

const CONTROL = /[\p{Cc}]/u;

/** Fails unless `name` is usable as one file name on any destination: no separator, no control character, not `.`/`..`, not empty, at most 255 UTF-8 bytes, well-formed Unicode. */
export function assertSafeFileName(name: unknown): void {
  assert.equal(typeof name, 'string', 'render must return a string');
  const text = name as string;
  assert.ok(text.length > 0, 'rendered name is empty');
  assert.ok(!text.includes('/') && !text.includes('\\'), `rendered name ${JSON.stringify(text)} contains a path separator`);
  assert.ok(!CONTROL.test(text), `rendered name ${JSON.stringify(text)} contains a control character`);
  assert.ok(text !== '.' && text !== '..', `rendered name ${JSON.stringify(text)} is a directory reference`);
  assert.ok(!/\p{Cs}/u.test(text), `rendered name ${JSON.stringify(text)} contains a lone surrogate (not encodable as UTF-8)`);
  const bytes = Buffer.byteLength(text, 'utf8');
  assert.ok(bytes <= 255, `rendered name is ${bytes} bytes long; file systems allow 255`);
}

/** Builds a strategy instance through the kernel's `instantiateAdapter`, as the engine does. */
export function createNamingStrategy(definition: unknown, config: unknown = {}): NamingStrategy {
  return createAdapterInstance<NamingStrategy>(definition, config);
}

/** Hostile and ordinary names: separators, `..`, control characters, lone surrogates, emoji, very long text. */
export function hostileNameArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('..', '.', '/', '\\', '../../etc/passwd', 'C:\\Windows', 'a/b\\c', '\u0000', '\u202Eexe.txt', ' . ', 'Immich', 'MM dd', 'backup_yyyy'),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.string({ unit: fc.constantFrom('/', '\\', '.', '\n', '\u0007', 'a', '_', '{', '}', "'"), maxLength: 30 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 200, maxLength: 400 }),
  );
}

function contextArbitrary(timezones: fc.Arbitrary<string>): fc.Arbitrary<NamingContext> {
  return fc.record(
    {
      jobName: hostileNameArbitrary(),
      databaseName: hostileNameArbitrary(),
      chain: fc.oneof(fc.constant(''), fc.constantFrom('1', 'full', 'inc-12'), hostileNameArbitrary()),
      date: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2090-12-31T23:59:59Z'), noInvalidDate: true }),
      timezone: timezones,
    },
    { requiredKeys: ['jobName', 'date', 'timezone'] },
  );
}

function anyZone(): fc.Arbitrary<string> {
  return fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', ...FIXED_OFFSET_ZONES.map((z) => z.zone));
}

function snapshot(context: NamingContext): string {
  return JSON.stringify({ ...context, date: context.date.getTime() });
}

function fuzzedPatterns(options: NamingSuiteOptions): fc.Arbitrary<string> {
  const fragments = options.patternFragments ?? [
    ...options.patterns.flatMap((p) => p.split(/(\{[^}]*\}|[_\-. ])/).filter(Boolean)),
    '/', '\\', '{', '}', '{unknown}', "'", ':', '\u0001', '..', ' ',
  ];
  return fc.oneof(
    fc.array(fc.constantFrom(...fragments), { maxLength: 8 }).map((parts) => parts.join('')),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom(...options.patterns),
  );
}

function propertyChecks(options: NamingSuiteOptions): ConformanceCheck[] {
  const run = <T>(property: fc.IRawProperty<T>) =>
    fc.assert(property, { numRuns: options.numRuns ?? 100, seed: options.seed, includeErrorInReport: true });
  const strategy = () => createNamingStrategy(options.definition, options.config ?? {});
  const patterns = fc.constantFrom(...options.patterns);
  return [
    {
      group: 'render',
      name: 'renders a safe file name for any job, database and chain name',
      run: async () => {
        const naming = strategy();
        run(fc.property(patterns, contextArbitrary(anyZone()), (pattern, context) => assertSafeFileName(naming.render(pattern, context))));
      },
    },
    {
      group: 'render',
      name: 'is pure: the same input gives the same name and the context is left untouched',
      run: async () => {
        const naming = strategy();
        run(fc.property(patterns, contextArbitrary(anyZone()), (pattern, context) => {
          const before = snapshot(context);
          const first = naming.render(pattern, context);
          const again = naming.render(pattern, { ...context, date: new Date(context.date.getTime()) });
          const fresh = strategy().render(pattern, context);
          assert.equal(again, first, `rendering ${JSON.stringify(pattern)} twice gave "${first}" and "${again}"`);
          assert.equal(fresh, first, 'a fresh instance with the same config rendered a different name');
          assert.equal(snapshot(context), before, 'render changed the context it was given');
        }));
      },
    },
    {
      group: 'render',
      name: 'renders date tokens in the given time zone (wall-clock time, not UTC)',
      run: async () => {
        const naming = strategy();
        const zones = fc.constantFrom(...FIXED_OFFSET_ZONES);
        run(fc.property(patterns, contextArbitrary(fc.constant('UTC')), zones, (pattern, context, { zone, offsetMinutes }) => {
          const inZone = naming.render(pattern, { ...context, timezone: zone });
          // The same wall-clock time expressed in UTC must give the same name.
          const shifted = new Date(context.date.getTime() + offsetMinutes * 60_000);
          const inUtc = naming.render(pattern, { ...context, date: shifted, timezone: 'UTC' });
          assert.equal(inZone, inUtc, `${zone} rendered "${inZone}" but the same wall-clock time in UTC rendered "${inUtc}"`);
        }));
      },
    },
    {
      group: 'validate',
      name: 'is consistent: never throws, answers the same twice, and every accepted pattern renders safely',
      run: async () => {
        const naming = strategy();
        run(fc.property(fuzzedPatterns(options), contextArbitrary(anyZone()), (pattern, context) => {
          const first = naming.validate(pattern);
          assert.deepEqual(naming.validate(pattern), first, `validate(${JSON.stringify(pattern)}) changed its answer`);
          if (first.ok) {
            assert.deepEqual(first, { ok: true }, 'an accepted pattern must answer exactly { ok: true }');
            assertSafeFileName(naming.render(pattern, context));
          } else {
            assert.ok(typeof first.message === 'string' && first.message.trim() !== '', `validate rejected ${JSON.stringify(pattern)} without a message`);
          }
        }));
      },
    },
  ];
}

function validationChecks(options: NamingSuiteOptions): ConformanceCheck[] {
  const strategy = () => createNamingStrategy(options.definition, options.config ?? {});
  return [
    {
      group: 'validate',
      name: 'accepts every given pattern',
      run: async () => {
        const naming = strategy();
        for (const pattern of options.patterns) {
          const result = naming.validate(pattern);
          assert.ok(result.ok, `valid pattern ${JSON.stringify(pattern)} was rejected: ${result.ok ? '' : result.message}`);
        }
      },
    },
    {
      group: 'validate',
      name: 'rejects the empty pattern and every given invalid pattern with a message',
      run: async () => {
        const naming = strategy();
        for (const pattern of ['', ...(options.invalidPatterns ?? [])]) {
          const result = naming.validate(pattern);
          assert.ok(!result.ok, `invalid pattern ${JSON.stringify(pattern)} was accepted`);
          assert.ok(result.message.trim() !== '', `pattern ${JSON.stringify(pattern)} was rejected without a message`);
        }
      },
    },
  ];
}

/** The naming checks as a list, for running programmatically. */
export function namingStrategyChecks(options: NamingSuiteOptions): ConformanceCheck[] {
  assert.ok(options.patterns.length > 0, 'describeNamingStrategy needs at least one valid pattern');
  return [...validationChecks(options), ...propertyChecks(options)];
}

/** Registers the naming conformance suite: safe names, purity, time zones, validate consistency. */
export function describeNamingStrategy(name: string, options: NamingSuiteOptions): void {
  registerChecks(`naming strategy ${name}`, namingStrategyChecks(options));
}
