import type { RetentionCandidate } from '@holdfast/sdk';
import { createRetentionStrategy } from '@holdfast/testkit';
import definition from '../src/index.js';

/** A strategy built the way the engine builds it (`instantiateAdapter`: schema-parsed config, child container). */
export function strategy(config: unknown) {
  return createRetentionStrategy(definition, config);
}

/** Runs a policy and returns `key -> "keep: reason"` / `"prune: reason"` for readable expectations. */
export function decide(config: unknown, backups: RetentionCandidate[], timezone = 'UTC'): Record<string, string> {
  const decisions = strategy(config).select(backups, new Date('2030-01-01T00:00:00Z'), timezone);
  return Object.fromEntries(decisions.map((d) => [d.key, `${d.action}: ${d.reason}`]));
}

/** Only the kept keys, newest first as listed. */
export function keptKeys(config: unknown, backups: RetentionCandidate[], timezone = 'UTC'): string[] {
  return Object.entries(decide(config, backups, timezone))
    .filter(([, verdict]) => verdict.startsWith('keep'))
    .map(([key]) => key);
}

/** A backup at an ISO instant; the key is the instant unless given. */
export function backup(iso: string, extra: Partial<RetentionCandidate> = {}): RetentionCandidate {
  return { key: extra.key ?? iso, createdAt: new Date(iso), locked: false, ...extra };
}

/** One backup per day at `time` UTC from `from` to `to` inclusive (YYYY-MM-DD), newest first. */
export function dailyBackups(from: string, to: string, time = '02:00:00'): RetentionCandidate[] {
  const result: RetentionCandidate[] = [];
  for (let day = new Date(`${from}T${time}Z`); day <= new Date(`${to}T${time}Z`); day = new Date(day.getTime() + 86_400_000)) {
    const iso = day.toISOString().slice(0, 10);
    result.unshift(backup(`${iso}T${time}Z`, { key: iso }));
  }
  return result;
}
