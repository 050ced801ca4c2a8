import type { NamingContext } from '@holdfast/sdk';
import { createNamingStrategy } from '@holdfast/testkit';
import definition from '../src/index.js';

/** A strategy built the way the engine builds it. */
export function naming(config: unknown = {}) {
  return createNamingStrategy(definition, config);
}

/** 19 Nov 2026 10:05:09.042 UTC (11:05 in Berlin). */
export const MOMENT = new Date('2026-11-19T10:05:09.042Z');

/** Renders with the default config; context fields default to job "Immich" at {@link MOMENT} in UTC. */
export function render(pattern: string, context: Partial<NamingContext> = {}, config: unknown = {}): string {
  return naming(config).render(pattern, { jobName: 'Immich', date: MOMENT, timezone: 'UTC', ...context });
}
