import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import type { RestoreResult } from '@holdfast/sdk';
import { createVolume, MOUNT_PATH, volumeExists } from './docker.js';
import { aborted, volumeError } from './errors.js';
import { HelperSession, type SessionPlan } from './session.js';

/**
 * Rewrites a backup tar (members `volume/...`, as the archive endpoint names them) into members relative to the
 * volume root. A member that would land outside it (absolute, `..`) fails the restore before Docker sees it.
 */
export function relativeToVolume(input: Readable): Readable {
  const extract = tar.extract();
  const pack = tar.pack();
  extract.on('entry', (header, body, next) => {
    let name: string | undefined;
    let linkname = header.linkname;
    try {
      name = stripRoot(header.name);
      if (header.type === 'link' && header.linkname) linkname = stripRoot(header.linkname);
    } catch (error) {
      // The output carries the refusal to the upload; the extract is only stopped (its error would be a duplicate).
      pack.destroy(error as Error);
      extract.destroy();
      return;
    }
    if (name === undefined) {
      body.resume();
      body.once('end', next);
      return;
    }
    // The pax path/linkpath records would override the rewritten names; pack writes fresh ones when needed.
    // (tar-stream keeps them as `pax` on the header; its type declarations omit the field.)
    const { path: _path, linkpath: _linkpath, ...pax } = (header as PaxHeaders).pax ?? {};
    const rewritten = { ...header, name, linkname: linkname ?? undefined, pax } as tar.Headers;
    const entry = pack.entry(rewritten, (error) => next(error ?? undefined));
    body.pipe(entry);
  });
  extract.once('finish', () => pack.finalize());
  pipeline(input, extract).catch((error: unknown) => pack.destroy(error as Error));
  return pack;
}

type PaxHeaders = tar.Headers & { pax?: Record<string, string> };

/** `volume/a/b` -> `a/b`; the root member itself -> undefined (skipped); unsafe names throw. */
function stripRoot(name: string): string | undefined {
  const normal = posix.normalize(name.replace(/^\.\//, ''));
  if (normal.startsWith('/') || normal === '..' || normal.startsWith('../')) {
    throw volumeError('CONFIG', `the archive member "${name}" points outside the volume`);
  }
  const slash = normal.indexOf('/');
  const rest = slash < 0 ? '' : normal.slice(slash + 1).replace(/\/$/, '');
  return rest === '' || rest === '.' ? undefined : rest;
}

/**
 * Restores a volume backup into `volume` (created when missing): a helper container with the volume mounted
 * read-write receives the rewritten tar through `PUT /containers/{id}/archive?path=/volume`. Existing files of the
 * same name are overwritten, others are left alone. The helper is removed and stopped users started again whatever
 * happens.
 */
export async function restoreVolume(input: Readable, plan: SessionPlan & { signal: AbortSignal }): Promise<RestoreResult> {
  if (plan.signal.aborted) throw aborted('restore');
  const warnings: string[] = [];
  if (!(await volumeExists(plan.api, plan.volume))) {
    plan.logger.info({ volume: plan.volume }, 'creating the restore target volume');
    await createVolume(plan.api, plan.volume);
    warnings.push(`volume ${plan.volume} did not exist and was created`);
  }
  const session = await HelperSession.open({ ...plan, readOnly: false });
  try {
    const rewritten = relativeToVolume(input);
    await plan.api.upload('PUT', `/containers/${session.helperId}/archive?path=${encodeURIComponent(MOUNT_PATH)}`, rewritten, plan.signal);
  } catch (error) {
    input.destroy();
    throw plan.signal.aborted ? aborted('restore') : error;
  } finally {
    warnings.push(...(await session.close()));
  }
  return { warnings };
}
