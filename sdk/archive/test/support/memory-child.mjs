// Runs in a child process (fresh heap, its own RSS): writes large members through the archive writer into a slow
// sink and reports the peak RSS seen while doing so. The bundle path comes from argv (built by the test with esbuild).
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const { createArchiveWriter } = await import(process.argv[2]);
const storedBytes = Number(process.argv[3]);
const compressedBytes = Number(process.argv[4]);
const CHUNK = 1024 * 1024;
const pattern = Buffer.alloc(CHUNK);
for (let i = 0; i < CHUNK; i += 1) pattern[i] = (i * 2654435761) >>> 24;

// A fresh buffer per chunk, so a writer that held on to its input would show up in RSS.
function source(total) {
  let produced = 0;
  return new Readable({
    read() {
      if (produced >= total) return this.push(null);
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, total - produced));
      pattern.copy(chunk, 0, 0, chunk.length);
      chunk.writeUInt32LE(produced / CHUNK, 0);
      produced += chunk.length;
      this.push(chunk);
    },
  });
}

let written = 0;
// Slower than the producer, so ignoring backpressure would pile data up in memory.
const sink = new Writable({
  highWaterMark: CHUNK,
  write(chunk, _encoding, callback) {
    written += chunk.length;
    setTimeout(callback, chunk.length >= 256 * 1024 ? 2 : 0);
  },
});

// The server collects V8's young generation every 20 ms while busy (apps/server/src/young-collections.ts); the test
// starts this child with --expose-gc and does the same, so dead stream buffers are freed as they are in the server.
// Without it Node 24 (V8 12) let 80-90 MiB of dead 1 MiB chunks wait for the external-memory trigger, Node 20 about 12.
const youngCollections = typeof gc === 'function' ? setInterval(() => gc({ type: 'minor' }), 20) : undefined;

let peak = 0;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage().rss);
};
const baseline = process.memoryUsage().rss;
const timer = setInterval(sample, 10);
const writer = createArchiveWriter({ compression: 'zstd', compressionLevel: 1 });
const done = pipeline(writer, sink);
await writer.addFile({ path: 'stored.bin', size: storedBytes, compression: 'none' }, source(storedBytes));
await writer.addDatabaseDump('big', source(compressedBytes));
const result = await writer.finish();
await done;
clearInterval(timer);
clearInterval(youngCollections);
sample();
process.stdout.write(JSON.stringify({ baseline, peak, written, archiveSize: result.archiveSize }));
