import { z } from '@holdfast/sdk';

/** Config of a local-directory destination. */
export const localStorageConfig = z.object({
  path: z
    .string()
    .trim()
    .min(1, 'path is required')
    .describe('Root directory of the destination; absolute, or relative to the server working directory. It must exist.'),
});

/** Parsed config of {@link localStorageConfig}. */
export type LocalStorageConfig = z.output<typeof localStorageConfig>;
