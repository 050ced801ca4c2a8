import { localPath, z } from '@holdfast/sdk';

/** Config of a local-directory destination. */
export const localStorageConfig = z.object({
  // A local path: it must lie in a folder the operator allows (HOLDFAST_LOCAL_ROOTS), never at Holdfast's data.
  path: localPath(
    z
      .string()
      .trim()
      .min(1, 'path is required')
      .describe(
        'Root directory of the destination; absolute, or relative to the server working directory. It must exist, lie inside a folder of HOLDFAST_LOCAL_ROOTS and never hold the data directory.',
      ),
    'storage',
  ),
});

/** Parsed config of {@link localStorageConfig}. */
export type LocalStorageConfig = z.output<typeof localStorageConfig>;
