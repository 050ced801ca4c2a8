import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, pipeline, Transform, type Readable, type Writable } from 'node:stream';
import tar from 'tar-stream';

/** Regular files and their bytes. */
export interface FileFigures {
  count: number;
  bytes: number;
}

/**
 * Counts the regular files of a tar stream as it passes (the directory source's archive, before compression), for
 * the figures a test restore compares with. Never slows or fails the backup: a parse problem only drops the figures.
 */
export class TarFigures {
  readonly input = new PassThrough({ highWaterMark: 1024 * 1024 });
  private readonly extract = tar.extract();
  private readonly figures: FileFigures = { count: 0, bytes: 0 };
  private failed = false;
  readonly done: Promise<FileFigures | null>;

  constructor() {
    this.extract.on('entry', (header, body, next) => {
      if (header.type === 'file' || header.type === 'contiguous-file') {
        this.figures.count += 1;
        this.figures.bytes += header.size ?? 0;
      }
      body.on('end', next);
      body.resume();
    });
    this.done = new Promise((resolve) => {
      this.extract.on('finish', () => resolve(this.failed ? null : { ...this.figures }));
      this.extract.on('error', () => {
        this.failed = true;
        // Keep the tap flowing: the backup must never wait on a figure counter that gave up.
        this.input.unpipe();
        this.input.resume();
        resolve(null);
      });
    });
    this.input.pipe(this.extract as unknown as Writable);
  }
}

/** Regular files below `root` and their total bytes (symbolic links are not followed). */
export async function countFiles(root: string): Promise<FileFigures> {
  const figures: FileFigures = { count: 0, bytes: 0 };
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    figures.count += 1;
    figures.bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return figures;
}

/**
 * Passes `source` through unchanged while `figures` counts the archive's files. Errors of `source` reach the
 * returned stream (a failed dump must still fail the backup), and destroying the returned stream stops `source`.
 */
export function tapFigures(source: Readable, figures: TarFigures): Readable {
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (figures.input.destroyed || figures.input.writableEnded || figures.input.write(chunk)) return callback(null, chunk);
      const resume = () => {
        figures.input.off('drain', resume);
        figures.input.off('close', resume);
        callback(null, chunk);
      };
      figures.input.on('drain', resume);
      figures.input.on('close', resume);
    },
    flush(callback) {
      figures.input.end();
      callback();
    },
  });
  pipeline(source, tap, () => undefined);
  return tap;
}
