import type { BSON as BsonNamespace } from 'mongodb';

// The driver is loaded by the first connection, not when the adapter is registered: importing it allocates bson's
// 17 MiB serialisation buffer (zero-filled, so resident) plus about 8 MiB of code, in every Holdfast process whether
// it ever backs up MongoDB or not.
let bson: typeof BsonNamespace | undefined;

/** Imports the MongoDB driver (once) and keeps its BSON for the export format's encoders and decoders. */
export async function loadDriver(): Promise<typeof import('mongodb')> {
  const driver = await import('mongodb');
  bson = driver.BSON;
  return driver;
}

/** The driver's BSON; the export format only runs on a connection, so the driver is loaded by then. */
export function loadedBson(): typeof BsonNamespace {
  if (!bson) throw new Error('the MongoDB driver is not loaded: connect first');
  return bson;
}
