import { HttpError } from '@holdfast/kernel';

import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { pack } from 'tar-stream';
import { Readable } from 'node:stream';

/** One file of a recovery kit (the engine's `buildRecoveryKit` returns these). */
export interface RecoveryKitFile {
  name: string;
  content: string;
  mode?: number;
}

/** Builds the files of a recovery kit for one profile key (the engine's `buildRecoveryKit`). */
export type RecoveryKitBuilder = (options: { key: Uint8Array; profileName?: string; signal?: AbortSignal }) => Promise<RecoveryKitFile[]>;

/**
 * Token under which the engine (or the composition root) registers its recovery-kit builder. The catalog may not
 * import the engine plugin, so it finds the builder through the container.
 */
export const RECOVERY_KIT_BUILDER = Symbol.for('holdfast:recovery-kit-builder') as InjectionToken<RecoveryKitBuilder>;

/** The registered builder, or a 503 saying the engine that provides it is not loaded. */
export function recoveryKitBuilder(container: DependencyContainer): RecoveryKitBuilder {
  if (!container.isRegistered(RECOVERY_KIT_BUILDER, true)) {
    throw new HttpError(503, 'Recovery kits are unavailable: the engine plugin that builds them is not loaded');
  }
  return container.resolve(RECOVERY_KIT_BUILDER);
}

/** Packs kit files into a streamed tar (each file under one folder named after the profile). */
export function tarOf(folder: string, files: readonly RecoveryKitFile[]): Readable {
  const tar = pack();
  const mtime = new Date();
  for (const file of files) {
    tar.entry({ name: `${folder}/${file.name}`, mode: file.mode ?? 0o644, mtime }, file.content);
  }
  tar.finalize();
  // tar-stream packs into a streamx stream; koa pipes only Node streams, so wrap it (backpressure is kept).
  return Readable.from(tar as AsyncIterable<Buffer>);
}

/** A file-system-safe folder/file name for a profile. */
export function kitFolderName(profileName: string): string {
  const safe = profileName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80);
  return `holdfast-recovery-kit-${safe || 'profile'}`;
}

