import {
  AdapterError,
  TOKENS,
  defineRetentionStrategy,
  inject,
  injectable,
  z,
  type RetentionCandidate,
  type RetentionDecision,
  type RetentionStrategy,
} from '@holdfast/sdk';
import { describe, expect, it } from 'vitest';
import { findCheck } from '../src/checks.js';
import { assertPartition, retentionStrategyChecks, type RetentionSuiteOptions } from '../src/retention.js';

// A small but correct strategy: keep the newest `count` unlocked backups, whole chains, locked always.
const configSchema = z.object({ count: z.int().min(1).describe('backups to keep') });
type Config = z.output<typeof configSchema>;

function newestFirst(a: RetentionCandidate, b: RetentionCandidate): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function keepLast(backups: readonly RetentionCandidate[], count: number, timezone: string): RetentionDecision[] {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new AdapterError('retention-reference', 'CONFIG', `unknown time zone "${timezone}"`);
  }
  const kept = new Set(backups.filter((b) => !b.locked).sort(newestFirst).slice(0, count).map((b) => b.key));
  const keptChains = new Set(backups.filter((b) => kept.has(b.key) || b.locked).map((b) => b.chainId));
  return backups.map((b) => {
    const keep = b.locked || kept.has(b.key) || (b.chainId !== undefined && keptChains.has(b.chainId));
    return { key: b.key, action: keep ? 'keep' : 'prune', reason: keep ? 'kept' : 'pruned' };
  });
}

/** Builds a definition whose select is `select(backups, count, timezone)`. */
function strategyWith(select: (backups: readonly RetentionCandidate[], count: number, timezone: string) => RetentionDecision[]) {
  @injectable()
  class Strategy implements RetentionStrategy {
    constructor(@inject(TOKENS.AdapterConfig) private readonly config: Config) {}
    select(backups: readonly RetentionCandidate[], _now: Date, timezone: string): RetentionDecision[] {
      return select(backups, this.config.count, timezone);
    }
  }
  return defineRetentionStrategy({ id: 'reference', displayName: 'Reference', configSchema, capabilities: {}, implementation: Strategy });
}

function suite(select: Parameters<typeof strategyWith>[0], extra: Partial<RetentionSuiteOptions> = {}) {
  return retentionStrategyChecks({
    definition: strategyWith(select),
    configs: [{ count: 3 }],
    invalidConfigs: [{ count: -1 }, { count: '3' }, { count: 1.5 }],
    numRuns: 60,
    seed: 20261119,
    ...extra,
  });
}

async function outcome(select: Parameters<typeof strategyWith>[0], check: string): Promise<string> {
  try {
    await findCheck(suite(select), check).run();
    return 'passed';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('retention conformance suite', () => {
  it('passes a correct strategy on every check', async () => {
    const checks = suite(keepLast);
    expect(checks.length).toBe(9);
    for (const check of checks) await expect(check.run(), check.name).resolves.toBeUndefined();
  });

  it('catches a strategy that prunes locked backups', async () => {
    const ignoresLock = (backups: readonly RetentionCandidate[], count: number, tz: string) =>
      keepLast(backups.map((b) => ({ ...b, locked: false })), count, tz);
    expect(await outcome(ignoresLock, 'never prunes a locked backup')).toMatch(/locked backup ".*" was pruned/);
  });

  it('catches a strategy that depends on the input order', async () => {
    const firstListed = (backups: readonly RetentionCandidate[], count: number): RetentionDecision[] =>
      backups.map((b, index) => ({ key: b.key, action: index < count || b.locked ? 'keep' : 'prune', reason: 'position' }));
    expect(await outcome(firstListed, 'does not depend on the input order')).toMatch(/reordering the input changed/);
  });

  it('catches a strategy that is not idempotent', async () => {
    // Always drops the oldest unlocked backup: a second run drops another one.
    const dropOldest = (backups: readonly RetentionCandidate[]): RetentionDecision[] => {
      const oldest = backups.filter((b) => !b.locked && b.chainId === undefined).sort(newestFirst).at(-1);
      return backups.map((b) => ({ key: b.key, action: b.key === oldest?.key && backups.length > 1 ? 'prune' : 'keep', reason: 'x' }));
    };
    expect(await outcome(dropOldest, 'idempotence')).toMatch(/second run over the kept backups pruned/);
  });

  it('catches a strategy that prunes the newest backup', async () => {
    const keepsOldest = (backups: readonly RetentionCandidate[], count: number, tz: string) =>
      keepLast(backups.map((b) => ({ ...b, createdAt: new Date(-b.createdAt.getTime()) })), count, tz);
    expect(await outcome(keepsOldest, 'or the newest backup')).toMatch(/the newest backup \(.*\) was pruned/);
  });

  it('catches missing, doubled and malformed decisions', async () => {
    const dropsOne = (backups: readonly RetentionCandidate[], count: number, tz: string) => keepLast(backups, count, tz).slice(1);
    expect(await outcome(dropsOne, 'partition the input')).toMatch(/no decision for 1 backup/);
    const backups = [{ key: 'a', createdAt: new Date(0), locked: false }];
    expect(() => assertPartition(backups, [...keepLast(backups, 1, 'UTC'), ...keepLast(backups, 1, 'UTC')])).toThrow(/two decisions for key "a"/);
    expect(() => assertPartition(backups, [{ key: 'a', action: 'keep', reason: ' ' }])).toThrow(/has no reason/);
  });

  it('catches a strategy that splits an incremental chain', async () => {
    const splitsChains = (backups: readonly RetentionCandidate[], count: number, tz: string) =>
      keepLast(backups.map((b) => ({ ...b, chainId: undefined })), count, tz);
    expect(await outcome(splitsChains, 'chain as a whole')).toMatch(/chain "chain-[abc]" was split/);
  });

  it('catches a nondeterministic strategy and one that mutates its input', async () => {
    let calls = 0;
    const flaky = (backups: readonly RetentionCandidate[], count: number, tz: string) =>
      keepLast(backups, count, tz).map((d) => ({ ...d, reason: `${d.reason} #${calls++}` }));
    expect(await outcome(flaky, 'deterministic')).toMatch(/two calls with the same input gave different results/);
    const sorts = (backups: readonly RetentionCandidate[], count: number, tz: string) =>
      keepLast((backups as RetentionCandidate[]).sort(newestFirst), count, tz);
    expect(await outcome(sorts, 'deterministic')).toMatch(/select changed its input/);
  });

  it('catches a schema that accepts invalid policies or rejects valid ones', async () => {
    const lax = suite(keepLast, { invalidConfigs: [{ count: 5 }] });
    await expect(findCheck(lax, 'rejects every invalid policy').run()).rejects.toThrow(/invalid policy \{"count":5\} was accepted/);
    const strict = suite(keepLast, { configs: [{ count: 0 }] });
    await expect(findCheck(strict, 'accepts every valid policy').run()).rejects.toThrow(/valid policy \{"count":0\} was rejected/);
  });

  it('catches a strategy that silently accepts an unknown time zone', async () => {
    const anyZone = (backups: readonly RetentionCandidate[], count: number) => keepLast(backups, count, 'UTC');
    expect(await outcome(anyZone, 'unknown time zone')).toMatch(/Missing expected exception/);
  });
});
