import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { RestoreContainment, type ContainedKind, type RestoreResult } from '@holdfast/sdk';
import { createVolume, MOUNT_PATH, volumeExists } from './docker.js';
import type { EngineApi } from './engine-api.js';
import { aborted, volumeError } from './errors.js';
import { HelperSession, type SessionPlan } from './session.js';

/** What the rewriting needs besides the input: the containment options and where refusals are named. */
export interface VolumeRewrite {
  /** Keep setuid/setgid/sticky bits (the Engine restores the archived owners with them). @default false */
  keepSpecialModes?: boolean;
  /** Receives one line per member left out or restored without its special bits. */
  warnings: string[];
}

const KINDS: Readonly<Record<string, ContainedKind>> = {
  file: 'file',
  'contiguous-file': 'file',
  directory: 'directory',
  symlink: 'symlink',
  link: 'hardlink',
  'character-device': 'device',
  'block-device': 'device',
  fifo: 'fifo',
};

/**
 * Rewrites a backup tar (members `volume/...` as Docker's archive endpoint names them, `/...` as Podman's does) into
 * members relative to the volume root, under the containment rule of every restore (docs/security.md): a member
 * that would land outside the volume (`..`, or absolute in Docker's layout) fails the restore; a member below a
 * symlink of the archive, a device node or FIFO, and a symlink that resolves outside the volume (through the
 * archive's other links too) are left out and named in `warnings`; setuid/setgid/sticky bits are dropped unless
 * `keepSpecialModes`. Symlinks go last, after every other member, so the Engine never writes through one.
 */
export function relativeToVolume(input: Readable, rewrite: VolumeRewrite = { warnings: [] }): Readable {
  const extract = tar.extract();
  const pack = tar.pack();
  const containment = new RestoreContainment<{ header: tar.Headers; name: string }>({ keepSpecialModes: rewrite.keepSpecialModes === true });
  let layout: Layout | undefined;
  extract.on('entry', (header, body, next) => {
    layout ??= layoutOf(header.name);
    const skip = () => {
      body.resume();
      body.once('end', next);
    };
    let name: string | undefined;
    let linkname = header.linkname;
    try {
      name = stripRoot(header.name, layout);
      if (header.type === 'link' && header.linkname) linkname = stripRoot(header.linkname, layout);
    } catch (error) {
      // The output carries the refusal to the upload; the extract is only stopped (its error would be a duplicate).
      pack.destroy(error as Error);
      extract.destroy();
      return;
    }
    if (name === undefined) return skip();
    const kind = KINDS[String(header.type)] ?? 'other';
    // The pax path/linkpath records would override the rewritten names; pack writes fresh ones when needed.
    // (tar-stream keeps them as `pax` on the header; its type declarations omit the field.)
    const { path: _path, linkpath: _linkpath, ...pax } = (header as PaxHeaders).pax ?? {};
    const rewritten = { ...header, name, linkname: linkname ?? undefined, pax } as tar.Headers;
    const isLink = kind === 'symlink' || kind === 'hardlink';
    const verdict = containment.admit({ path: name, kind, mode: header.mode ?? 0o644, ...(isLink ? { target: linkname ?? '', payload: { header: rewritten, name: header.name } } : {}) });
    if ('refused' in verdict) {
      rewrite.warnings.push(`${header.name}: ${kind === 'symlink' ? 'symlink refused' : kind === 'hardlink' ? 'hard link refused' : 'refused'}, ${verdict.refused}`);
      return skip();
    }
    if (verdict.note) rewrite.warnings.push(`${header.name}: ${verdict.note}`);
    // Symlinks (and hard links to them) are written after everything else, once all of them are known.
    if (kind === 'symlink' || verdict.becameSymlink) return skip();
    const entry = pack.entry({ ...rewritten, mode: verdict.mode }, (error) => next(error ?? undefined));
    body.pipe(entry);
  });
  extract.once('finish', () => {
    void (async () => {
      const { accepted, refused } = containment.settle();
      for (const link of refused) rewrite.warnings.push(`${link.payload?.name ?? link.path}: symlink refused, ${link.reason}`);
      for (const link of accepted) {
        const header = { ...link.payload?.header, name: link.path, type: 'symlink' as const, linkname: link.target, size: 0 };
        await new Promise<void>((resolve, reject) => pack.entry(header, (error) => (error ? reject(error) : resolve())));
      }
      pack.finalize();
    })().catch((error: unknown) => pack.destroy(error as Error));
  });
  pipeline(input, extract).catch((error: unknown) => pack.destroy(error as Error));
  return pack;
}

type PaxHeaders = tar.Headers & { pax?: Record<string, string> };

/**
 * How the Engine named the archive's members: Docker names them after the mount point (`volume`, `volume/a/b`);
 * Podman (4.x) roots them at `/` (`/`, `/a/b`) when the path is a volume's mount point. The first member, the mount
 * point itself, tells which: only an archive that starts with `/` may hold absolute names.
 */
type Layout = 'named' | 'rooted';
const layoutOf = (first: string): Layout => (posix.normalize(first) === '/' ? 'rooted' : 'named');

/** `volume/a/b` (or `/a/b` in a rooted archive) -> `a/b`; the root member itself -> undefined (skipped); unsafe names throw. */
function stripRoot(name: string, layout: Layout): string | undefined {
  const outside = () => volumeError('CONFIG', `the archive member "${name}" points outside the volume`);
  if (layout === 'rooted') {
    if (!name.startsWith('/')) throw volumeError('CONFIG', `the archive member "${name}" is not below "/" like the archive's first member`);
    const normal = posix.normalize(name).slice(1).replace(/\/$/, '');
    if (normal === '..' || normal.startsWith('../')) throw outside();
    return normal === '' ? undefined : normal;
  }
  const normal = posix.normalize(name.replace(/^\.\//, ''));
  if (normal.startsWith('/') || normal === '..' || normal.startsWith('../')) throw outside();
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
export async function restoreVolume(input: Readable, plan: SessionPlan & { signal: AbortSignal; keepSpecialModes?: boolean; overwrite?: boolean }): Promise<RestoreResult> {
  if (plan.signal.aborted) throw aborted('restore');
  const warnings: string[] = [];
  if (!(await volumeExists(plan.api, plan.volume))) {
    plan.logger.info({ volume: plan.volume }, 'creating the restore target volume');
    await createVolume(plan.api, plan.volume);
    warnings.push(`volume ${plan.volume} did not exist and was created`);
  }
  const session = await HelperSession.open({ ...plan, readOnly: false });
  try {
    // Without overwrite, the volume is looked at once its users are stopped, right before anything is written: data
    // that appeared after the engine's check is not written over.
    if (plan.overwrite === false && (await holdsData(plan.api, session.helperId, plan.signal))) {
      throw volumeError(
        'CONFIG',
        `volume ${plan.volume} is not empty and the restore request did not allow writing over it: nothing was written. Send "overwrite": true to replace the files of the same name in it, or restore into a new volume (database)`,
      );
    }
    const rewritten = relativeToVolume(input, { keepSpecialModes: plan.keepSpecialModes === true, warnings });
    await plan.api.upload('PUT', `/containers/${session.helperId}/archive?path=${encodeURIComponent(MOUNT_PATH)}`, rewritten, plan.signal);
  } catch (error) {
    input.destroy();
    throw plan.signal.aborted ? aborted('restore') : error;
  } finally {
    warnings.push(...(await session.close()));
  }
  return { warnings };
}

/** True when the volume mounted in `helperId` holds at least one entry (read from its archive, stopped after two). */
async function holdsData(api: EngineApi, helperId: string, signal: AbortSignal): Promise<boolean> {
  const response = await api.stream('GET', `/containers/${helperId}/archive?path=${encodeURIComponent(MOUNT_PATH)}`, signal);
  const extract = tar.extract();
  response.on('error', (error) => extract.destroy(error));
  response.pipe(extract);
  let entries = 0;
  try {
    // The first member is the volume's root folder itself.
    for await (const entry of extract) {
      entry.resume();
      if (++entries > 1) break;
    }
  } finally {
    response.destroy();
    extract.destroy();
  }
  return entries > 1;
}

/**
 * What a restore into `volume` would write over: the volume, when it exists and is not empty (a helper container
 * mounts it read-only to look; its users keep running). Empty list otherwise.
 */
export async function volumeWouldBeReplaced(plan: SessionPlan & { signal?: AbortSignal }): Promise<string[]> {
  if (!(await volumeExists(plan.api, plan.volume))) return [];
  const signal = plan.signal ?? new AbortController().signal;
  const session = await HelperSession.open({ ...plan, readOnly: true, stopUsers: false });
  try {
    return (await holdsData(plan.api, session.helperId, signal)) ? [plan.volume] : [];
  } finally {
    await session.close();
  }
}
