// Issue 44 acceptance 5 (and PostgreSQL alike): a point-in-time job is never saved against a server that cannot serve
// it. Before a save, a source in a point-in-time mode (`pointInTime()` not null) is asked `readiness()`: the same
// checks its test-connection runs (binary logging, wal_level, replication privileges...). Any problem refuses the save
// with a 422 naming every one; a server that cannot be reached or does not answer in time refuses too, saying it could
// not be checked (saving first and failing at the first run is what this check exists to prevent). Warnings never
// refuse. A source in another mode, or whose adapter has no `readiness`, is not contacted at all.
import {
  HttpError,
  instantiateAdapter,
  withTimeout,
  type AnyAdapterDefinition,
  type PointInTimeReadiness,
  type PointInTimeSupport,
  type SourceAdapter,
} from '@holdfast/kernel';
import type { CatalogDeps } from './deps.js';

/** How long a save waits for the source's server by default. */
export const POINT_IN_TIME_READINESS_TIMEOUT_MS = 10_000;

/** 422: the source is in a point-in-time mode and its server cannot serve it, or could not be checked. Nothing is saved. */
export class PointInTimeNotReady extends HttpError {
  constructor(message: string, details: { source: string; checked: boolean; problems: string[]; warnings: string[] }) {
    super(422, message, details);
  }
}

/** A source configuration as it would be saved: plain config, decrypted credentials. */
export interface SourceToCheck {
  name: string;
  definition: AnyAdapterDefinition;
  config: Record<string, unknown>;
  credentials: Record<string, Record<string, unknown>>;
}

/** True when `source` is configured for point-in-time recovery (answered from the config alone, nothing is contacted). */
export async function isPointInTimeSource(deps: CatalogDeps, source: SourceToCheck): Promise<boolean> {
  return withSupport(deps, source, async (support) => support !== null);
}

/** The change log a point-in-time source streams (`postgres-wal`, `mysql-binlog`), or null when it is in another mode. */
export async function pointInTimeLogKind(deps: CatalogDeps, source: SourceToCheck): Promise<string | null> {
  return withSupport(deps, source, async (support) => support?.logKind ?? null);
}

/**
 * Refuses (422) when `source` is in a point-in-time mode and its server cannot serve it; answers the warnings when it
 * can (empty when the source is not in such a mode, which is never contacted).
 */
export async function assertPointInTimeReady(deps: CatalogDeps, source: SourceToCheck, timeoutMs = deps.pointInTimeReadinessTimeoutMs ?? POINT_IN_TIME_READINESS_TIMEOUT_MS): Promise<string[]> {
  return withSupport(deps, source, async (support) => {
    if (!support?.readiness) return [];
    const readiness = support.readiness.bind(support);
    const controller = new AbortController();
    type Outcome = { answer: PointInTimeReadiness } | { failure: string };
    const asked = readiness({ signal: controller.signal }).then(
      (answer): Outcome => ({ answer }),
      (error: unknown): Outcome => ({ failure: withoutOrigin(error instanceof Error ? error.message : String(error)) }),
    );
    const seconds = Math.round(timeoutMs / 100) / 10;
    const outcome = await withTimeout<Outcome>(asked, timeoutMs, () => ({ failure: `its server did not answer within ${seconds} seconds` }));
    // Stops a check still running after the time bound (a late answer is ignored).
    controller.abort();
    const subject = `source "${source.name}"`;
    if ('failure' in outcome) {
      throw new PointInTimeNotReady(
        `${subject} could not be checked for point-in-time recovery, so nothing was saved: ${outcome.failure} (a point-in-time job is saved only once its server answers the check; test the source's connection, then save again)`,
        { source: source.name, checked: false, problems: [], warnings: [] },
      );
    }
    const { problems, warnings } = outcome.answer;
    if (problems.length > 0) {
      throw new PointInTimeNotReady(`${subject} cannot serve point-in-time recovery: ${problems.join(' ')}`, { source: source.name, checked: true, problems, warnings });
    }
    if (warnings.length > 0) deps.logger.warn({ source: source.name, warnings }, 'point-in-time source saved with warnings');
    return warnings;
  });
}

/** Builds the adapter (no connection: instances connect lazily), hands its point-in-time support to `use`, disposes. */
async function withSupport<T>(deps: CatalogDeps, source: SourceToCheck, use: (support: PointInTimeSupport | null) => Promise<T>): Promise<T> {
  if (source.definition.kind !== 'source') return use(null);
  let instance: SourceAdapter;
  try {
    instance = instantiateAdapter(deps.container, source.definition, source.config, { instanceName: source.name, logger: deps.logger, credentials: source.credentials }) as SourceAdapter;
  } catch (error) {
    // A stored config the installed adapter no longer accepts: saves never depended on it, the run reports it.
    deps.logger.debug({ source: source.name, err: error instanceof Error ? error.message : String(error) }, 'point-in-time readiness skipped: the source does not build');
    return use(null);
  }
  try {
    return await use(instance.pointInTime?.() ?? null);
  } finally {
    await instance.dispose?.().catch((error: unknown) => deps.logger.warn({ err: String(error) }, 'adapter dispose failed'));
  }
}

/** `[source-mysql] cannot connect ...` → `cannot connect ...`: the sentence names the source already. */
function withoutOrigin(message: string): string {
  return message.replace(/^\[[^\]]+\] /, '');
}
