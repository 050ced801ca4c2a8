import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ArchiveResult, ArchiveWriter, RangeReader } from '../../src/index.js';

/** A fresh temporary directory per test, removed by the returned cleanup. */
export async function makeTempDir(label: string): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `holdfast-archive-${label}-`));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Runs `fill` against the writer while its stream is piped to a file, then finishes the archive. */
export async function writeArchiveFile(
  writer: ArchiveWriter,
  file: string,
  fill: (writer: ArchiveWriter) => Promise<void>,
): Promise<ArchiveResult> {
  const written = pipeline(writer, createWriteStream(file));
  const filled = (async () => {
    await fill(writer);
    return writer.finish();
  })();
  // Surface whichever side fails first instead of hanging on the other one.
  const [result] = await Promise.all([filled, written]);
  return result;
}

/** The index file a writer returned, in one buffer (what the `.index` sidecar holds). */
export function indexFileOf(result: Pick<ArchiveResult, 'indexFile'>): Buffer {
  return Buffer.concat([...result.indexFile.chunks()]);
}

/** A range reader over a local file that counts every byte it serves, like a storage server would see. */
export function countingFileRangeReader(file: string): { rangeReader: RangeReader; served: () => number; requests: [number, number][] } {
  let served = 0;
  const requests: [number, number][] = [];
  const rangeReader: RangeReader = async (start, endInclusive) => {
    requests.push([start, endInclusive]);
    const stream = createReadStream(file, { start, end: endInclusive });
    stream.on('data', (chunk) => {
      served += chunk.length;
    });
    return stream;
  };
  return { rangeReader, served: () => served, requests };
}
