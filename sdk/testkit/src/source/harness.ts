import { createAdapterInstance } from '../helpers/instantiate.js';
import {
  type AdapterContext,
  type DumpOptions,
  type RestoreTarget,
  type SourceAdapter,
  type SourceCapabilities,
} from '@holdfast/sdk';

/** The check groups of the source suite; pass names to `disable` to switch groups off. */
export const SOURCE_CHECK_GROUPS = ['round trip', 'connect failure', 'abort', 'health check', 'discovery'] as const;

/** One of {@link SOURCE_CHECK_GROUPS}. */
export type SourceCheckGroup = (typeof SOURCE_CHECK_GROUPS)[number];

/** Options of `describeSourceAdapter`. `S` is whatever `seed()` returns (names of what it created). */
export interface SourceSuiteOptions<S = unknown, C = unknown> {
  /** The adapter's default export. */
  definition: unknown;
  /**
   * Creates fresh data in the real server (a throwaway database, a temp directory). Make it at least ~1 MiB so a
   * dump is still running when the abort check stops it after the first chunk.
   */
  seed(): Promise<S>;
  /** A working config that reaches the seeded data. */
  config(seeded: S): C | Promise<C>;
  /** A config that passes schema validation but cannot connect (closed port, wrong host, missing directory). */
  badConnectionConfig: unknown | (() => unknown | Promise<unknown>);
  /** What to dump (`databases`, `engineOptions`); default: everything. */
  dumpOptions?(seeded: S): Partial<Omit<DumpOptions, 'signal'>>;
  /** Where the round trip restores to (a second throwaway database, another temp directory). */
  restoreTarget(seeded: S): RestoreTarget | Promise<RestoreTarget>;
  /** Compares the restored data with the seeded data; throw (or use expect) on any difference. */
  verify(restored: RestoreTarget, seeded: S): Promise<void>;
  /** Removes the seeded data and the restore target. */
  cleanup?(seeded: S, restored: RestoreTarget | undefined): void | Promise<void>;
  /** Groups to switch off. */
  disable?: SourceCheckGroup[];
  /** Why each switched-off group does not apply; shown in the skipped tests' names. */
  disableReasons?: Partial<Record<SourceCheckGroup, string>>;
  /** Extra adapter context (logger, credentials). */
  context?: Partial<AdapterContext>;
}

/** Builds a source instance from a raw config. */
export function buildSource(options: SourceSuiteOptions<unknown>, config: unknown): SourceAdapter {
  return createAdapterInstance(options.definition, config, options.context) as SourceAdapter;
}

/** The declared capabilities of the definition under test. */
export function sourceCapabilitiesOf(options: SourceSuiteOptions<unknown>): SourceCapabilities {
  return (options.definition as { capabilities: SourceCapabilities }).capabilities;
}

/** The bad connection config, evaluated. */
export async function badConnectionConfigOf(options: SourceSuiteOptions<unknown>): Promise<unknown> {
  const raw = options.badConnectionConfig;
  return typeof raw === 'function' ? (raw as () => unknown)() : raw;
}

/** Seeds, builds a source on a fresh config, runs `work`, then disposes and cleans up. */
export async function withSeededSource(
  options: SourceSuiteOptions<unknown>,
  work: (source: SourceAdapter, seeded: unknown, useTarget: (target: RestoreTarget) => void) => Promise<void>,
): Promise<void> {
  const seeded = await options.seed();
  let target: RestoreTarget | undefined;
  try {
    const source = buildSource(options, await options.config(seeded));
    try {
      await work(source, seeded, (used) => {
        target = used;
      });
    } finally {
      await source.dispose?.();
    }
  } finally {
    await options.cleanup?.(seeded, target);
  }
}

/** Dump options for a run: the adapter test's choice plus the signal. */
export function dumpOptionsFor(options: SourceSuiteOptions<unknown>, seeded: unknown, signal: AbortSignal): DumpOptions {
  const chosen = options.dumpOptions?.(seeded) ?? {};
  return { databases: chosen.databases ?? [], engineOptions: chosen.engineOptions, signal };
}
