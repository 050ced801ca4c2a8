import { HttpError, TOKENS, type RecoveryKitBuilder, type RecoveryKitFile } from '@holdfast/kernel';

import type { DependencyContainer } from 'tsyringe';
import { pack } from 'tar-stream';
import { Readable } from 'node:stream';

export type { RecoveryKitBuilder, RecoveryKitFile } from '@holdfast/kernel';

/** The kernel token the engine registers its recovery-kit builder under (the catalog may not import the engine). */
export const RECOVERY_KIT_BUILDER = TOKENS.RecoveryKitBuilder;

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

