import assert from 'node:assert/strict';
import {
  isAdapterError,
  type AnyAdapterDefinition,
  type RetentionCandidate,
  type RetentionDecision,
  type RetentionStrategy,
} from '@holdfast/sdk';
import fc from 'fast-check';
import { registerChecks, type ConformanceCheck } from './checks.js';
import { createAdapterInstance } from './helpers/instantiate.js';

/** Options of {@link describeRetentionStrategy}. */
export interface RetentionSuiteOptions {
  /** The adapter's default export. */
  definition: unknown;
  /** Valid policies; every property is checked against each of them. */
  configs: readonly unknown[];
  /** Policies the config schema must reject (negative tiers, strings, unknown modes...). */
  invalidConfigs?: readonly unknown[];
  /** Zones the backups are bucketed in (default: UTC and zones with DST, half- and quarter-hour offsets). */
  timezones?: readonly string[];
  /** fast-check runs per property and config (default 100). */
  numRuns?: number;
  /** Fixed fast-check seed, to replay a failure. */
  seed?: number;
}

/** Default zones: no DST, European and American DST, a +05:45 offset, and a 30-minute DST shift. */
export const RETENTION_TEST_TIMEZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
] as const;

const BASE = Date.UTC(2025, 11, 20);
const MINUTE = 60_000;

/**
 * Backup lists with unique keys: times spread over three years plus dense clusters (many backups per hour and
 * day, across the 2026 DST changes) so tiers see both sparse and crowded periods; some locked, some in chains.
 */
export function retentionCandidatesArbitrary(maxLength = 40): fc.Arbitrary<RetentionCandidate[]> {
  const instant = fc.oneof(
    fc.integer({ min: -365 * 24 * 60, max: 2 * 365 * 24 * 60 }).map((m) => new Date(BASE + m * MINUTE)),
    fc.integer({ min: 0, max: 96 * 4 }).map((q) => new Date(BASE + q * 15 * MINUTE)),
    fc.integer({ min: -48 * 2, max: 48 * 2 }).map((h) => new Date(Date.UTC(2026, 9, 25, 1) + h * 30 * MINUTE)),
  );
  const candidate = fc.record(
    {
      key: fc.string({ minLength: 1, maxLength: 12 }),
      createdAt: instant,
      locked: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
      chainId: fc.constantFrom('chain-a', 'chain-b', 'chain-c'),
    },
    { requiredKeys: ['key', 'createdAt', 'locked'] },
  );
  return fc.uniqueArray(candidate, { selector: (c) => c.key, maxLength });
}

/** Builds a strategy instance through the kernel's `instantiateAdapter`, as the engine does. */
export function createRetentionStrategy(definition: unknown, config: unknown): RetentionStrategy {
  return createAdapterInstance<RetentionStrategy>(definition, config);
}

/** Decisions keyed by backup key; fails when a key is missing, doubled or unknown, or a decision is malformed. */
export function assertPartition(backups: readonly RetentionCandidate[], decisions: unknown): Map<string, RetentionDecision> {
  assert.ok(Array.isArray(decisions), 'select must return an array of decisions');
  const byKey = new Map<string, RetentionDecision>();
  for (const decision of decisions as RetentionDecision[]) {
    assert.ok(decision.action === 'keep' || decision.action === 'prune', `decision for "${decision.key}" has action "${String(decision.action)}"`);
    assert.ok(typeof decision.reason === 'string' && decision.reason.trim() !== '', `decision for "${decision.key}" has no reason`);
    assert.ok(!byKey.has(decision.key), `two decisions for key "${decision.key}"`);
    byKey.set(decision.key, decision);
  }
  const expected = backups.map((b) => b.key);
  const missing = expected.filter((key) => !byKey.has(key));
  assert.deepEqual(missing, [], `no decision for ${missing.length} backup(s): ${missing.join(', ')}`);
  assert.equal(byKey.size, expected.length, 'decisions name keys that were not in the input');
  return byKey;
}

function actions(decisions: Map<string, RetentionDecision>): Record<string, string> {
  return Object.fromEntries([...decisions].map(([key, d]) => [key, `${d.action}: ${d.reason}`]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
}

interface PropertyInput {
  backups: RetentionCandidate[];
  shuffled: RetentionCandidate[];
  timezone: string;
  now: Date;
}

function propertyInputs(options: RetentionSuiteOptions): fc.Arbitrary<PropertyInput> {
  const timezones = options.timezones ?? RETENTION_TEST_TIMEZONES;
  return retentionCandidatesArbitrary().chain((backups) =>
    fc.record({
      backups: fc.constant(backups),
      shuffled: fc.shuffledSubarray(backups, { minLength: backups.length, maxLength: backups.length }),
      timezone: fc.constantFrom(...timezones),
      now: fc.constant(new Date(BASE + 3 * 365 * 24 * 60 * MINUTE)),
    }),
  );
}

/** What a property may need besides the instance: the definition and config it was built from. */
interface PropertySubject {
  definition: unknown;
  config: unknown;
}

type Property = (strategy: RetentionStrategy, input: PropertyInput, subject: PropertySubject) => void;

/** The contract properties; each throws an assertion error naming what broke. */
const PROPERTIES: ReadonlyArray<{ name: string; property: Property }> = [
  {
    name: 'keep and prune partition the input: one well-formed decision per key',
    property: (strategy, { backups, now, timezone }) => {
      assertPartition(backups, strategy.select(backups, now, timezone));
    },
  },
  {
    name: 'the result does not depend on the input order',
    property: (strategy, { backups, shuffled, now, timezone }) => {
      const original = assertPartition(backups, strategy.select(backups, now, timezone));
      const reordered = assertPartition(shuffled, strategy.select(shuffled, now, timezone));
      assert.deepEqual(actions(reordered), actions(original), 'reordering the input changed the decisions');
    },
  },
  {
    name: 'applying the policy to its own kept set prunes nothing (idempotence)',
    property: (strategy, { backups, now, timezone }) => {
      const first = assertPartition(backups, strategy.select(backups, now, timezone));
      const kept = backups.filter((b) => first.get(b.key)?.action === 'keep');
      const second = assertPartition(kept, strategy.select(kept, now, timezone));
      const prunedNow = [...second.values()].filter((d) => d.action === 'prune').map((d) => d.key);
      assert.deepEqual(prunedNow, [], 'a second run over the kept backups pruned some of them');
    },
  },
  {
    name: 'never prunes a locked backup or the newest backup',
    property: (strategy, { backups, now, timezone }) => {
      const decisions = assertPartition(backups, strategy.select(backups, now, timezone));
      for (const backup of backups.filter((b) => b.locked)) {
        assert.equal(decisions.get(backup.key)?.action, 'keep', `locked backup "${backup.key}" was pruned`);
      }
      if (backups.length === 0) return;
      const newest = Math.max(...backups.map((b) => b.createdAt.getTime()));
      const newestKept = backups.some((b) => b.createdAt.getTime() === newest && decisions.get(b.key)?.action === 'keep');
      assert.ok(newestKept, `the newest backup (${new Date(newest).toISOString()}) was pruned`);
    },
  },
  {
    name: 'keeps or prunes an incremental chain as a whole',
    property: (strategy, { backups, now, timezone }) => {
      const decisions = assertPartition(backups, strategy.select(backups, now, timezone));
      const byChain = new Map<string, Set<string>>();
      for (const backup of backups) {
        if (backup.chainId === undefined) continue;
        const seen = byChain.get(backup.chainId) ?? new Set<string>();
        seen.add(decisions.get(backup.key)!.action);
        byChain.set(backup.chainId, seen);
      }
      for (const [chainId, seen] of byChain) assert.equal(seen.size, 1, `chain "${chainId}" was split between keep and prune`);
    },
  },
  {
    name: 'is deterministic and leaves its input untouched',
    property: (strategy, { backups, now, timezone }, { definition, config }) => {
      const snapshot = backups.map((b) => ({ ...b, createdAt: b.createdAt.getTime() }));
      const first = strategy.select(backups, now, timezone);
      const second = strategy.select(backups, now, timezone);
      const fresh = createRetentionStrategy(definition, config).select(backups, now, timezone);
      assert.deepEqual(second, first, 'two calls with the same input gave different results');
      assert.deepEqual(fresh, first, 'a fresh instance with the same config gave a different result');
      assert.deepEqual(backups.map((b) => ({ ...b, createdAt: b.createdAt.getTime() })), snapshot, 'select changed its input');
    },
  },
];

function label(config: unknown): string {
  return JSON.stringify(config) ?? String(config);
}

function configChecks(options: RetentionSuiteOptions): ConformanceCheck[] {
  const definition = options.definition as AnyAdapterDefinition;
  return [
    {
      group: 'config',
      name: 'accepts every valid policy',
      run: async () => {
        for (const config of options.configs) {
          const parsed = definition.configSchema.safeParse(config);
          assert.ok(parsed.success, `valid policy ${label(config)} was rejected: ${parsed.error?.message}`);
        }
      },
    },
    {
      group: 'config',
      name: 'rejects every invalid policy at instantiation with a CONFIG error',
      run: async () => {
        for (const config of options.invalidConfigs ?? []) {
          assert.throws(
            () => createRetentionStrategy(definition, config),
            (error: unknown) => isAdapterError(error) && error.code === 'CONFIG',
            `invalid policy ${label(config)} was accepted`,
          );
        }
      },
    },
    {
      group: 'config',
      name: 'rejects an unknown time zone with an error naming it',
      run: async () => {
        for (const config of options.configs) {
          const strategy = createRetentionStrategy(definition, config);
          const backups = [{ key: 'a', createdAt: new Date(BASE), locked: false }];
          assert.throws(() => strategy.select(backups, new Date(BASE), 'Mars/Olympus_Mons'), /Mars\/Olympus_Mons/);
        }
      },
    },
  ];
}

/** The retention checks as a list (one per property and config), for running programmatically. */
export function retentionStrategyChecks(options: RetentionSuiteOptions): ConformanceCheck[] {
  assert.ok(options.configs.length > 0, 'describeRetentionStrategy needs at least one valid config');
  const propertyChecks = options.configs.flatMap((config) =>
    PROPERTIES.map(({ name, property }): ConformanceCheck => ({
      group: `properties of ${label(config)}`,
      name,
      run: async () => {
        const strategy = createRetentionStrategy(options.definition, config);
        fc.assert(
          fc.property(propertyInputs(options), (input) => property(strategy, input, { definition: options.definition, config })),
          { numRuns: options.numRuns ?? 100, seed: options.seed, includeErrorInReport: true },
        );
      },
    })),
  );
  return [...configChecks(options), ...propertyChecks];
}

/** Registers the retention conformance suite: partition, order independence, idempotence, safety, chains, determinism. */
export function describeRetentionStrategy(name: string, options: RetentionSuiteOptions): void {
  registerChecks(`retention strategy ${name}`, retentionStrategyChecks(options));
}
