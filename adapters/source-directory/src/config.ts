import { localPath, z } from '@holdfast/sdk';

/** Config of a directory source: which paths go into the tar stream and how they are walked. */
export const directorySourceConfig = z.object({
  // Local paths: read widely, but never Holdfast's own data directory unless HOLDFAST_ALLOW_DATA_DIR_SOURCE=true.
  paths: localPath(
    z
      .array(z.string().trim().regex(/^\//, 'each path must be absolute (start with "/")'))
      .min(1, 'at least one path is required')
      .describe(
        "Absolute paths (directories or single files) archived together as one tar stream; never Holdfast's data directory (or a folder holding it) unless HOLDFAST_ALLOW_DATA_DIR_SOURCE=true",
      ),
    'source',
  ),
  exclude: z
    .array(z.string().trim().min(1))
    .default([])
    .describe(
      'Glob patterns (picomatch syntax) matched against paths relative to each root; a pattern without "/" matches a name at any depth (e.g. "node_modules", "*.log")',
    ),
  followSymlinks: z
    .boolean()
    .default(false)
    .describe('Archive what symlinks point to instead of the links themselves (default: links are archived as links)'),
  maxConcurrentFiles: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(4)
    .describe('Files opened ahead in parallel while the tar is written in order (1-16); the job may override it'),
});

/** Parsed config of {@link directorySourceConfig}. */
export type DirectorySourceConfig = z.output<typeof directorySourceConfig>;
