import type { AdapterContext, RestoreTarget, ScratchPlacement, SourceAdapter, SourceScratch } from '@holdfast/sdk';
import { createAdapterInstance } from '../helpers/instantiate.js';

/** The check groups of the scratch suite; pass names to `disable` to switch groups off. */
export const SCRATCH_CHECK_GROUPS = ['declaration', 'figures', 'scratch round trip', 'cleanup'] as const;

/** One of {@link SCRATCH_CHECK_GROUPS}. */
export type ScratchCheckGroup = (typeof SCRATCH_CHECK_GROUPS)[number];

/**
 * Options of `describeSourceScratch`. `S` is whatever `seed()` returns. The suite does what a test restore does:
 * it reads the seeded database's figures, dumps it, restores the dump into a scratch, compares the scratch's figures
 * and removes the scratch again.
 */
export interface ScratchSuiteOptions<S = unknown, C = unknown> {
  /** The adapter's default export; it must declare `capabilities.scratchRestore`. */
  definition: unknown;
  /** Creates fresh data in the real server: a database with known contents. */
  seed(): Promise<S>;
  /** A working config that reaches the seeded data (and the scratch). */
  config(seeded: S): C | Promise<C>;
  /** The seeded database as `dump` and `figures` name it (a database name, a file path, an index). */
  database(seeded: S): string;
  /** The figures `seed` created, exactly: table -> rows, or `{ keys, expires }` for `counts: 'keys'`. */
  expectedFigures(seeded: S): Record<string, number>;
  /**
   * Where the scratch goes: for placement `database` a database name the suite may create and drop (default: a
   * fresh `hf_testkit_scratch_<random>`); for `file` a path in a folder the suite may write (default: a temp folder);
   * for `index` an empty index reserved for the test (required).
   */
  scratchName?(seeded: S): string | Promise<string>;
  /** Removes the seeded data (the suite removes the scratch itself). */
  cleanup?(seeded: S): void | Promise<void>;
  /** Groups to switch off, and why. */
  disable?: ScratchCheckGroup[];
  disableReasons?: Partial<Record<ScratchCheckGroup, string>>;
  /** Extra adapter context (logger, credentials). */
  context?: Partial<AdapterContext>;
}

/** The placement the definition under test declares (undefined when it declares none). */
export function declaredPlacement(options: ScratchSuiteOptions<unknown>): ScratchPlacement | undefined {
  return (options.definition as { capabilities?: { scratchRestore?: ScratchPlacement } }).capabilities?.scratchRestore;
}

/** Seeds, builds a source and its scratch on a fresh config, runs `work`, then disposes and cleans up. */
export async function withSeededScratch(
  options: ScratchSuiteOptions<unknown>,
  work: (scratch: SourceScratch, source: SourceAdapter, seeded: unknown) => Promise<void>,
): Promise<void> {
  const seeded = await options.seed();
  try {
    const source = createAdapterInstance<SourceAdapter>(options.definition, await options.config(seeded), options.context);
    try {
      if (!source.scratch) throw new Error('the source declares capabilities.scratchRestore but implements no scratch()');
      await work(source.scratch(), source, seeded);
    } finally {
      await source.dispose?.();
    }
  } finally {
    await options.cleanup?.(seeded);
  }
}

/** The restore target that puts a dump of `original` into scratch `name`, as the engine builds it per placement. */
export function scratchTarget(placement: ScratchPlacement, original: string, name: string): RestoreTarget {
  return placement === 'file' ? { path: name } : { database: name, databaseMapping: { [original]: name } };
}
