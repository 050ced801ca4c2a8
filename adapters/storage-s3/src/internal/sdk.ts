import type * as AwsS3 from '@aws-sdk/client-s3';

/** The AWS S3 client module: its client and command classes. */
export type S3Sdk = typeof AwsS3;

let loading: Promise<S3Sdk> | undefined;

/**
 * Loads the AWS SDK on first use, once per process. Importing it costs about 3 MiB of heap and 3 MiB of RSS (measured
 * with `node --expose-gc`), which every server would otherwise carry from startup, S3 destination or not.
 */
export function loadS3Sdk(): Promise<S3Sdk> {
  loading ??= import('@aws-sdk/client-s3').catch((error: unknown) => {
    // A failed load (a broken install) is not cached, so the next use tries again and reports it again.
    loading = undefined;
    throw error;
  });
  return loading;
}
