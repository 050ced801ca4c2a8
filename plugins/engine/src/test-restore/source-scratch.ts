import type { ResolvedAdapterConfig, ScratchPlacement, SourceAdapter, SourceScratch, TestRestoreConfig } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import type { RunServices } from '../run/services.js';

/** How each placement is described in messages (the test restore target type that uses it). */
const PLACEMENT_NAMES: Readonly<Record<ScratchPlacement, string>> = {
  database: 'throwaway databases (target type database)',
  file: 'a scratch database file (target type sqlite)',
  index: 'a reserved database index (target type redis)',
};

/**
 * The scratch of a configured source, asked of the source itself: its adapter declares the placement
 * (`capabilities.scratchRestore`) and its instance hands out the operations, or says why this configuration cannot
 * take part (reached over SSH, a dump mode that cannot be restored into a running server). Throws when the source
 * has no scratch of the `wanted` placement; `role` names the source in that message.
 */
export function scratchOf(adapters: AdapterFactory, config: ResolvedAdapterConfig, source: SourceAdapter, wanted: ScratchPlacement, role: string): SourceScratch {
  const declared = adapters.scratchPlacement(config.adapterId);
  if (declared !== wanted) {
    const has = declared ? `its scratch is ${PLACEMENT_NAMES[declared]}` : 'it has no scratch databases';
    throw new Error(`${role} "${config.name}" (${config.adapterId}) cannot take ${PLACEMENT_NAMES[wanted]}: ${has}`);
  }
  if (!source.scratch) throw new Error(`source ${config.adapterId} declares capabilities.scratchRestore but implements no scratch()`);
  try {
    return source.scratch();
  } catch (error) {
    throw new Error(`${role} "${config.name}" cannot take part in test restores: ${(error as Error).message}`, { cause: error });
  }
}

/** The source a test restore restores through, with its scratch (null for a directory target: a folder). */
export interface ScratchSource {
  config: ResolvedAdapterConfig;
  source: SourceAdapter;
  scratch: SourceScratch | null;
  /** The job source's scratch server (index targets: to refuse restoring over the backed-up database). */
  jobServer?: string;
  /** Instances built only to ask them (the job's source next to another scratch server), to dispose at the end. */
  helpers: SourceAdapter[];
}

/**
 * Resolves where a test restore goes and checks it fits before anything is downloaded: a directory target takes a
 * directory source; a sqlite target the job's own source with a file scratch; a redis target a job source and a
 * scratch server (default: the job's source) with index scratch; a database target a scratch server with throwaway
 * databases. SPEC: a source excluded from restores is never a target, not even for a throwaway database.
 */
export async function resolveScratchSource(
  services: RunServices,
  jobSource: ResolvedAdapterConfig,
  config: TestRestoreConfig,
  /** The test restore's run: a source on an agent writes its adapter's log lines to the run's log. */
  run?: Parameters<AdapterFactory['source']>[1],
): Promise<ScratchSource> {
  const { adapters } = services;
  const { target } = config;
  if (target.type === 'directory') {
    if (!adapters.isFileArchive(jobSource.adapterId)) throw new Error(`a directory scratch target needs a directory source; the job's source is ${jobSource.adapterId}`);
    // The engine makes, counts and removes a folder scratch on this server's disk; a source on an agent would restore
    // onto the agent's disk instead (docs/agents.md). Refused before anything is downloaded or written.
    if (jobSource.agentId) throw new Error(`test restores into a folder are not offered for a source on a remote agent (${jobSource.name} runs on one): use a database, sqlite or redis target, or run the job's source on the server`);
    return { config: jobSource, source: adapters.source(jobSource, run), scratch: null, helpers: [] };
  }
  if (target.type === 'sqlite') {
    // The restore runs through the job's own source (its CLI) into a scratch file; the source's file is untouched.
    const source = adapters.source(jobSource, run);
    return { config: jobSource, source, scratch: await settled(source, () => scratchOf(adapters, jobSource, source, 'file', "the job's source")), helpers: [] };
  }
  const server = target.sourceId ? await services.catalog.resolveAdapterConfig(target.sourceId) : jobSource;
  const source = adapters.source(server, run);
  const helpers: SourceAdapter[] = [];
  try {
    const placement = target.type === 'redis' ? 'index' : 'database';
    let jobServer: string | undefined;
    if (placement === 'index') {
      // The job's source must be restorable into an index at all (a Redis rdb snapshot is not).
      const jobInstance = server === jobSource ? source : adapters.source(jobSource, run);
      if (jobInstance !== source) helpers.push(jobInstance);
      const jobScratch = scratchOf(adapters, jobSource, jobInstance, 'index', "the job's source");
      jobServer = jobScratch.placement === 'index' ? jobScratch.server : undefined;
    }
    const scratch = scratchOf(adapters, server, source, placement, 'the scratch server');
    if (server.excludeFromRestore) throw new Error(`source "${server.name}" is excluded from restores; name another server as the scratch target (testRestore.target.sourceId)`);
    return { config: server, source, scratch, jobServer, helpers };
  } catch (error) {
    await disposeAll([source, ...helpers]);
    throw error;
  }
}

/** Runs `ask` on a freshly built source; disposes the source when it throws. */
async function settled<T>(source: SourceAdapter, ask: () => T): Promise<T> {
  try {
    return ask();
  } catch (error) {
    await disposeAll([source]);
    throw error;
  }
}
