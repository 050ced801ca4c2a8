import { ConflictError, defineRoute, lineText, NotFoundError, ValidationError, type JobCatalog, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { archiveInfoOf } from '../archive/archive-sidecar.js';
import { loadSnapshot } from '../archive/snapshot-loader.js';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import { requireProfile } from '../restore/restore-run.js';
import { readSidecar } from '../run/sidecar.js';

const errorBody = z.object({ error: z.string() });

const archiveEntry = z.object({
  path: z.string(),
  kind: z.enum(['file', 'directory', 'symlink', 'hardlink', 'database-dump']),
  size: z.number().int().nullable().describe('Uncompressed bytes of a file or dump'),
  mode: z.number().int(),
  mtime: z.string().describe('ISO 8601 modification time'),
  target: z.string().nullable().describe('Symlink target or hard link path'),
  database: z.string().nullable(),
  archive: z.string().describe('The backup of the chain that holds the bytes (this one, or an earlier one)'),
});

const archiveListing = z.object({
  file: z.string(),
  createdAt: z.string(),
  chain: z.object({ id: z.string(), sequence: z.number().int(), baseArchives: z.array(z.string()) }).nullable(),
  requiredArchives: z.array(z.string()).describe('Backups a full restore of this snapshot reads, oldest first'),
  deletions: z.array(z.string()),
  renames: z.array(z.object({ from: z.string(), to: z.string() })),
  entries: z.array(archiveEntry),
});

/** `GET /api/storage/:id/archive?file=`: the tree of a seekable archive, read from its index sidecar(s) only. */
export function archiveRoutes(catalog: () => JobCatalog, adapters: () => AdapterFactory): RouteDefinition[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/storage/:id/archive',
      summary: "List a seekable archive's files, folders and databases from its index sidecar (the archive itself is not read)",
      tags: ['storage'],
      access: { permission: 'storage:read', scope: { resource: 'destination', param: 'id' } },
      request: { params: z.object({ id: z.string().min(1).max(64) }), query: z.object({ file: lineText({ min: 1, max: 1024 }).describe('Path of the backup within the storage') }) },
      responses: {
        200: { description: 'The snapshot the archive (with its chain) holds.', schema: archiveListing },
        400: { description: 'The file is not a seekable archive.', schema: errorBody },
        404: { description: 'Storage or file not found.', schema: errorBody },
        409: { description: 'The index, or an earlier backup of its chain, is missing or fails its checks.', schema: errorBody },
      },
      handler: async ({ params, query, signal }) => {
        const resolved = await catalog().resolveAdapterConfig(params.id);
        if (resolved.kind !== 'storage') throw new NotFoundError('Storage not found');
        const storage = adapters().storage(resolved);
        try {
          const sidecar = await readSidecar(storage.adapter, query.file, signal).catch(() => null);
          if (!sidecar) throw new NotFoundError(`"${query.file}" is not a backup on this storage (no .meta.json sidecar)`);
          const info = archiveInfoOf(sidecar);
          if (!info) throw new ValidationError(`"${query.file}" is not a seekable archive; only seekable archives can be listed`);
          const profileId = sidecar.encryption?.profileId;
          const key = sidecar.encryption ? await catalog().encryptionKey(requireProfile(profileId)) : null;
          const { snapshot } = await loadSnapshot(storage, query.file, key, signal).catch((error: unknown) => {
            // A chain member deleted by hand or an index that fails its checks: the storage's state, said plainly.
            throw new ConflictError(`the archive cannot be listed: ${(error as Error).message}`);
          });
          return {
            file: query.file,
            createdAt: sidecar.createdAt,
            chain: info.chain,
            requiredArchives: snapshot.requiredArchives,
            deletions: snapshot.deletions,
            renames: snapshot.renames,
            entries: snapshot.entries.map((entry) => ({
              path: entry.path,
              kind: entry.kind,
              size: entry.size ?? null,
              mode: entry.mode,
              mtime: new Date(Number(entry.mtime) * 1000).toISOString(),
              target: entry.target ?? null,
              database: entry.database ?? null,
              archive: entry.archive,
            })),
          };
        } finally {
          await disposeAll([storage.adapter]);
        }
      },
    }),
  ];
}
