import type { Readable } from 'node:stream';
import {
  inject,
  injectable,
  TOKENS,
  type AdapterContext,
  type DumpHandle,
  type DumpOptions,
  type HealthResult,
  type RestoreOptions,
  type RestoreResult,
  type RestoreTarget,
  type SourceAdapter,
  type SourceVersion,
} from '@holdfast/sdk';
import type { VolumeSourceConfig } from './config.js';
import { engineVersion, volumeExists, volumeNames } from './internal/docker.js';
import { startVolumeDump } from './internal/dump.js';
import { EngineApi, remoteEndpoint } from './internal/engine-api.js';
import { volumeError } from './internal/errors.js';
import { restoreVolume, volumeWouldBeReplaced } from './internal/restore.js';
import type { SessionPlan } from './internal/session.js';
import { resolveDockerSshTarget } from './internal/ssh.js';
import { SshDockerTunnel } from './internal/ssh-tunnel.js';

/** Backs up a Docker volume as the tar stream of the Engine's archive endpoint, and restores it into a volume. */
@injectable()
export class VolumeSource implements SourceAdapter {
  private readonly api: EngineApi;
  private readonly tunnel: SshDockerTunnel | undefined;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: VolumeSourceConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    // With `ssh`, the login is resolved per connection, so a credential profile fixed later takes effect.
    this.tunnel = config.ssh ? new SshDockerTunnel(() => resolveDockerSshTarget(config, context)!, remoteEndpoint(config.dockerHost)) : undefined;
    this.api = new EngineApi(config, this.tunnel);
  }

  async dispose(): Promise<void> {
    this.tunnel?.close();
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const { version } = await engineVersion(this.api);
      if (!(await volumeExists(this.api, this.config.volume))) {
        return { ok: false, message: `volume ${this.config.volume} does not exist on ${this.api.label}`, latencyMs: Date.now() - started, version };
      }
      return { ok: true, message: `Docker Engine ${version}, volume ${this.config.volume} found`, latencyMs: Date.now() - started, version };
    } catch (error) {
      return { ok: false, message: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  async detectVersion(): Promise<SourceVersion> {
    const { version, apiVersion } = await engineVersion(this.api);
    return { version, edition: apiVersion ? `Docker Engine (API ${apiVersion})` : 'Docker Engine' };
  }

  async listDatabases(): Promise<string[]> {
    return volumeNames(this.api);
  }

  async dump(options: DumpOptions): Promise<DumpHandle> {
    const volume = this.selectVolume(options.databases);
    // The version is read first: it proves the Engine answers before any container is touched.
    const { version } = await engineVersion(this.api);
    if (!(await volumeExists(this.api, volume))) throw volumeError('NOT_FOUND', `volume ${volume} does not exist on ${this.api.label}`);
    this.context.logger.info({ volume, stopContainers: this.config.stopContainers }, 'starting volume dump');
    return startVolumeDump({ ...this.plan(volume), signal: options.signal, engineVersion: version });
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    try {
      const target = this.restoreVolumeName(options.target);
      await engineVersion(this.api);
      this.context.logger.info({ volume: target }, 'restoring volume');
      const overwrite = options.overwrite;
      return await restoreVolume(stream, { ...this.plan(target), signal: options.signal, keepSpecialModes: options.target.keepSpecialModes === true, ...(overwrite === undefined ? {} : { overwrite }) });
    } catch (error) {
      // Refused before reading, the engine's download would otherwise wait on a stream nobody reads: ended with the
      // refusal (its feeder listens for errors; a bare stream gets a listener so nothing goes unhandled).
      stream.on('error', () => undefined);
      stream.destroy(error as Error);
      throw error;
    }
  }

  /** The target volume, when it exists and is not empty: a restore without overwrite writes over it (issue 47). */
  async restoreWouldReplace(target: RestoreTarget, signal?: AbortSignal): Promise<string[]> {
    return volumeWouldBeReplaced({ ...this.plan(this.restoreVolumeName(target)), ...(signal ? { signal } : {}) });
  }

  /** `database`, else the mapping of the configured volume, else the configured volume. */
  private restoreVolumeName(target: RestoreTarget): string {
    const name = target.database ?? target.databaseMapping?.[this.config.volume] ?? this.config.volume;
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) throw volumeError('CONFIG', `"${name}" is not a valid Docker volume name`);
    return name;
  }

  private plan(volume: string): SessionPlan {
    return { api: this.api, volume, image: this.config.helperImage, readOnly: true, stopUsers: this.config.stopContainers, logger: this.context.logger };
  }

  /** One volume per dump: the job may name another volume than the configured one. */
  private selectVolume(databases: readonly string[]): string {
    if (databases.length === 0) return this.config.volume;
    if (databases.length > 1) throw volumeError('CONFIG', `one volume per dump; got ${databases.length} (${databases.join(', ')})`);
    const volume = databases[0]!;
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(volume)) throw volumeError('CONFIG', `"${volume}" is not a valid Docker volume name`);
    return volume;
  }
}
