import { constants } from 'node:fs';
import { access, opendir, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  AdapterError,
  type ArchiveRestoreInput,
  inject,
  injectable,
  TOKENS,
  type AdapterContext,
  type DumpHandle,
  type DumpOptions,
  type HealthResult,
  type LocalPathUse,
  type RestoreOptions,
  type RestoreResult,
  type SourceAdapter,
  type SourceVersion,
} from '@holdfast/sdk';
import type { DirectorySourceConfig } from './config.js';
import { startArchiveDump } from './internal/archive-dump.js';
import { restoreArchiveSnapshot } from './internal/archive-restore.js';
import { startDump } from './internal/dump.js';
import { canPipeDump, startPipedDump } from './internal/piped-dump.js';
import { canPipeRestore, restoreInChild } from './internal/piped-restore.js';
import { DIRECTORY_ORIGIN, abandonInput, toAdapterError } from './internal/errors.js';
import { restoreArchive, restoreDestination, type TarRestoreOptions } from './internal/restore.js';
import type { ArchiveRoot } from './internal/walk.js';

/**
 * `keepSpecialModes` restores setuid/setgid/sticky bits together with the archived owners, which only root can set:
 * asked for by anyone else, it fails the restore before anything is written instead of restoring root-less bits.
 */
function restoreModes(options: RestoreOptions): TarRestoreOptions {
  const keepSpecialModes = options.target.keepSpecialModes === true;
  if (keepSpecialModes && process.getuid?.() !== 0) {
    throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', 'keepSpecialModes restores owners with the setuid/setgid/sticky bits, which needs Holdfast to run as root');
  }
  return { keepSpecialModes, refuseReplacing: options.overwrite === false };
}

/** Version of the archive layout (`<index>-<basename>/...` members in a PAX tar); bumped if the layout changes. */
export const ARCHIVE_LAYOUT_VERSION = '1';

/** Backs up directories (and single files) as one streamed tar archive, and restores it below a target folder. */
@injectable()
export class DirectorySource implements SourceAdapter {
  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: DirectorySourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      for (const path of this.config.paths) await this.assertReadable(path);
      const count = this.config.paths.length;
      return { ok: true, message: `${count} path${count === 1 ? '' : 's'} readable`, latencyMs: Date.now() - started, version: `tar layout ${ARCHIVE_LAYOUT_VERSION}` };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  /** There is no server: the version is the archive layout this adapter writes. */
  async detectVersion(): Promise<SourceVersion> {
    return { version: ARCHIVE_LAYOUT_VERSION, edition: 'tar (POSIX pax)' };
  }

  async listDatabases(): Promise<string[]> {
    return [...this.config.paths];
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    const roots = this.selectRoots(options.databases);
    // Every root is checked before the first byte, so a missing or unmounted path fails the run instead of
    // producing an archive without it.
    for (const root of roots) await this.assertReadable(root.path);
    const maxOpenFiles = this.maxOpenFiles(options.engineOptions);
    if (options.archive) {
      this.context.logger.info({ paths: roots.map((root) => root.path), chain: options.archive.chain }, 'starting directory dump as a seekable archive');
      return startArchiveDump({
        roots,
        exclude: this.config.exclude,
        followSymlinks: this.config.followSymlinks,
        refusal: this.linkRefusal(),
        request: options.archive,
        logger: this.context.logger,
        signal: options.signal,
      });
    }
    // Straight into the compressor from a child process of its own when the engine compresses in one; not with a
    // refusal check of followed links (the host's rule is a function of this process).
    const refusal = this.linkRefusal();
    if (options.compressorInput && !(this.config.followSymlinks && refusal) && canPipeDump()) {
      this.context.logger.info({ paths: roots.map((root) => root.path) }, 'starting directory dump into the compressor');
      return startPipedDump({
        roots,
        exclude: [...this.config.exclude],
        followSymlinks: this.config.followSymlinks,
        input: options.compressorInput,
        logger: this.context.logger,
        signal: options.signal,
      });
    }
    this.context.logger.info({ paths: roots.map((root) => root.path), maxOpenFiles }, 'starting directory dump');
    return startDump({
      roots,
      exclude: this.config.exclude,
      followSymlinks: this.config.followSymlinks,
      refusal,
      maxOpenFiles,
      logger: this.context.logger,
      signal: options.signal,
    });
  }

  /** The engine may decode in a child process and hand its output over (RestoreOptions.decodedInput). */
  readonly acceptsDecodedInput = true;

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    try {
      const destination = restoreDestination(options.target, this.config.paths);
      // A restore writes: into a folder the operator allows, or back to the source's own (policy-checked) paths.
      if (destination.kind === 'folder') await this.assertPolicy(destination.path, 'restore-target');
      else for (const root of destination.roots) await this.assertPolicy(root, 'source');
      const modes = restoreModes(options);
      const decoded = options.decodedInput;
      if (!decoded) return await restoreArchive(stream, destination, options.signal, modes);
      // Decoded by the engine's child: extracted by a child of this source's own when it can run here (the tar never
      // enters this process), else read here; either way nothing is moved into place before the engine verified it.
      if (canPipeRestore()) {
        this.context.logger.info({ destination }, 'restoring through the tar extractor process');
        return await restoreInChild({ input: decoded, destination, options: modes, logger: this.context.logger, signal: options.signal });
      }
      return await restoreArchive(decoded.open(), destination, options.signal, { ...modes, beforeCommit: () => decoded.verified });
    } catch (error) {
      // Refused before reading, the engine's download would otherwise wait on a stream nobody reads.
      abandonInput(stream, error);
      throw error;
    }
  }

  async restoreArchive(input: ArchiveRestoreInput, options: RestoreOptions): Promise<RestoreResult> {
    const destination = restoreDestination(options.target, this.config.paths);
    if (destination.kind === 'folder') await this.assertPolicy(destination.path, 'restore-target');
    else for (const root of destination.roots) await this.assertPolicy(root, 'source');
    return restoreArchiveSnapshot(input, destination, options.signal, restoreModes(options));
  }

  /** `databases` names a subset of the configured paths; the member index stays the path's position in the config. */
  private selectRoots(selected: readonly string[]): ArchiveRoot[] {
    const all = this.config.paths.map((path, index) => ({ index, path }));
    if (selected.length === 0) return all;
    const unknown = selected.filter((path) => !this.config.paths.includes(path));
    if (unknown.length > 0) {
      throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', `not configured paths: ${unknown.join(', ')} (configured: ${this.config.paths.join(', ')})`);
    }
    return all.filter((root) => selected.includes(root.path));
  }

  private maxOpenFiles(engineOptions: Readonly<Record<string, unknown>> | undefined): number {
    const override = engineOptions?.maxConcurrentFiles;
    if (override === undefined || override === null || override === '') return this.config.maxConcurrentFiles;
    const value = Number(override);
    if (!Number.isInteger(value) || value < 1 || value > 16) {
      throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', `maxConcurrentFiles must be an integer from 1 to 16, got "${String(override)}"`);
    }
    return value;
  }

  /** With the host's local path rule: why a followed symlink may not be read (it leads to the data directory). */
  private linkRefusal(): ((absolute: string) => Promise<string | undefined>) | undefined {
    const policy = this.context.localPaths;
    if (!policy) return undefined;
    return async (absolute) => {
      try {
        await policy.check(absolute, 'source');
        return undefined;
      } catch (error) {
        if ((error as Error)?.name === 'LocalPathRefusedError') return 'it leads to a protected path';
        throw error;
      }
    };
  }

  /** The host's local path rule (checked at use too: a link may have changed since the config was saved). */
  private async assertPolicy(path: string, use: LocalPathUse): Promise<void> {
    if (!this.context.localPaths) return;
    try {
      await this.context.localPaths.check(path, use);
    } catch (error) {
      if ((error as Error)?.name === 'LocalPathRefusedError') throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', (error as Error).message);
      throw toAdapterError(error, `cannot check ${path}`);
    }
  }

  private async assertReadable(path: string): Promise<void> {
    await this.assertPolicy(path, 'source');
    try {
      const info = await stat(path);
      if (info.isDirectory()) await (await opendir(path)).close();
      else if (info.isFile()) await access(path, constants.R_OK);
      else throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', `${path} is neither a directory nor a regular file`);
    } catch (error) {
      throw toAdapterError(error, `path ${path} cannot be read (is it mounted?)`);
    }
  }
}
