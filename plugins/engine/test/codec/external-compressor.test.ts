// Issue 42, lever 1: ZSTD and GZIP compressed by `zstd` / `pigz` in a child process. The output must decode with the
// readers that already exist (the engine's decompress streams, GNU gunzip), byte for byte like the in-process codec's;
// a child that fails or is killed must fail the stream with its name and status; a destroyed stream kills the child.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abortablePipeline } from '@holdfast/kernel';
import { createCompressStream, createDecompressStream } from '../../src/codec/index.js';
import {
  createExternalCompressStream,
  describeExternalCompressor,
  externalCompressorFor,
  findOnPath,
  type ExternalCompressor,
} from '../../src/codec/compression/external-compressor.js';

const zstdPath = findOnPath('zstd');
const pigzPath = findOnPath('pigz');

/** Compressible, not trivial: log-like lines with random parts, a few MiB. */
function sampleInput(bytes: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = `2026-12-07T04:${String(size % 60).padStart(2, '0')} INFO request ${randomBytes(6).toString('hex')} took ${size % 997} ms\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join('')).subarray(0, bytes);
}

/** Feeds `input` in 64 KiB pieces through the stages and collects what comes out. */
async function through(input: Buffer, ...stages: NodeJS.ReadWriteStream[]): Promise<Buffer> {
  const pieces: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      pieces.push(chunk);
      callback();
    },
  });
  const source = Readable.from((function* () {
    for (let offset = 0; offset < input.length; offset += 64 * 1024) yield input.subarray(offset, offset + 64 * 1024);
  })());
  await pipeline([source, ...stages, sink]);
  return Buffer.concat(pieces);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

// This file tests the external compressor switched on (the default), whatever the environment running the tests says.
const savedSwitch = process.env.HOLDFAST_EXTERNAL_COMPRESSOR;
beforeAll(() => {
  process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
});
afterAll(() => {
  if (savedSwitch === undefined) delete process.env.HOLDFAST_EXTERNAL_COMPRESSOR;
  else process.env.HOLDFAST_EXTERNAL_COMPRESSOR = savedSwitch;
});

describe('choosing the external compressor', () => {
  it('uses zstd at the job level with every core, or the job thread count', () => {
    const env = { PATH: process.env.PATH, HOLDFAST_EXTERNAL_COMPRESSOR: 'on' };
    if (!zstdPath) return expect(externalCompressorFor({ codec: 'ZSTD' }, env)).toBeNull();
    expect(externalCompressorFor({ codec: 'ZSTD' }, env)).toEqual({ command: zstdPath, args: ['-3', '-T0', '-q', '-c'] });
    const chosen = externalCompressorFor({ codec: 'ZSTD', level: 7, threads: 2 }, env)!;
    expect(chosen.args).toEqual(['-7', '-T2', '-q', '-c']);
    expect(describeExternalCompressor(chosen)).toBe('zstd -7 -T2');
  });

  it('uses pigz for GZIP only when it is installed, and nothing for NONE or BROTLI', () => {
    const env = { PATH: process.env.PATH, HOLDFAST_EXTERNAL_COMPRESSOR: 'on' };
    expect(externalCompressorFor({ codec: 'GZIP', level: 5 }, env)).toEqual(pigzPath ? { command: pigzPath, args: ['-5', '-n', '-c'] } : null);
    expect(externalCompressorFor({ codec: 'NONE' }, env)).toBeNull();
    expect(externalCompressorFor({ codec: 'BROTLI' }, env)).toBeNull();
  });

  it('honours HOLDFAST_EXTERNAL_COMPRESSOR=off and a PATH without the program', () => {
    for (const off of ['off', 'OFF', '0', 'false', 'no']) {
      expect(externalCompressorFor({ codec: 'ZSTD' }, { PATH: process.env.PATH, HOLDFAST_EXTERNAL_COMPRESSOR: off })).toBeNull();
      expect(externalCompressorFor({ codec: 'GZIP' }, { PATH: process.env.PATH, HOLDFAST_EXTERNAL_COMPRESSOR: off })).toBeNull();
    }
    expect(externalCompressorFor({ codec: 'ZSTD' }, { PATH: '/nonexistent-holdfast-dir', HOLDFAST_EXTERNAL_COMPRESSOR: 'on' })).toBeNull();
    // On unless switched off (the default).
    if (zstdPath) expect(externalCompressorFor({ codec: 'ZSTD' }, { PATH: process.env.PATH })).not.toBeNull();
    if (pigzPath) expect(externalCompressorFor({ codec: 'GZIP' }, { PATH: process.env.PATH, HOLDFAST_EXTERNAL_COMPRESSOR: '' })).not.toBeNull();
    if (zstdPath) expect(externalCompressorFor({ codec: 'ZSTD' }, { PATH: process.env.PATH, HOLDFAST_EXTERNAL_COMPRESSOR: 'on' })).not.toBeNull();
  });
});

describe('compressing in a child process', () => {
  let dir: string;
  const input = sampleInput(6 * 1024 * 1024 + 12345);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-external-compressor-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A fake compressor: a shell script in the test folder. */
  async function script(name: string, body: string): Promise<ExternalCompressor> {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return { command: path, args: [] };
  }

  it.skipIf(!zstdPath)('zstd output decodes with the engine reader and zstd, like the in-process codec (skipped without zstd on PATH)', async () => {
    const external = await through(input, createExternalCompressStream(externalCompressorFor({ codec: 'ZSTD' })!));
    const inProcess = await through(input, createCompressStream('ZSTD'));
    expect(external.readUInt32LE(0)).toBe(0xfd2fb528); // a zstd frame
    expect((await through(external, createDecompressStream('ZSTD'))).equals(input)).toBe(true);
    expect((await through(inProcess, createDecompressStream('ZSTD'))).equals(input)).toBe(true);
    const cli = spawnSync(zstdPath!, ['-d', '-c', '-q'], { input: external, maxBuffer: 64 * 1024 * 1024 });
    expect(cli.status).toBe(0);
    expect(cli.stdout.equals(input)).toBe(true);
  });

  it.skipIf(!pigzPath)('pigz output decodes with the engine reader and gunzip (skipped without pigz on PATH)', async () => {
    const external = await through(input, createExternalCompressStream(externalCompressorFor({ codec: 'GZIP' })!));
    expect(external.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))).toBe(true);
    expect((await through(external, createDecompressStream('GZIP'))).equals(input)).toBe(true);
    const cli = spawnSync('gunzip', ['-c'], { input: external, maxBuffer: 64 * 1024 * 1024 });
    expect(cli.status).toBe(0);
    expect(cli.stdout.equals(input)).toBe(true);
  });

  it.skipIf(!zstdPath || !pigzPath)('the recovery kit decodes both programs\' output (skipped without zstd and pigz on PATH)', async () => {
    // The kit is plain JavaScript shipped beside the backups; imported by path (no types), as a user runs it.
    const kitModule = join(import.meta.dirname, '../../../../sdk/recovery-kit/kit/decompress.mjs');
    const kit = await import(kitModule);
    for (const [codec, name] of [['ZSTD', 'zstd'], ['GZIP', 'gzip']] as const) {
      const file = join(dir, `kit-input.${name}`);
      await writeFile(file, await through(input, createExternalCompressStream(externalCompressorFor({ codec })!)));
      const pieces: Buffer[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          pieces.push(chunk);
          callback();
        },
      });
      await kit.decodeFile(file, { codec: name, sink, key: () => Buffer.alloc(0) });
      expect(Buffer.concat(pieces).equals(input), name).toBe(true);
    }
  });

  it('an empty input gives a valid empty stream', async () => {
    const cat = await script('cat-compressor', 'exec cat');
    expect((await through(Buffer.alloc(0), createExternalCompressStream(cat))).length).toBe(0);
  });

  it('a child that exits non-zero mid-stream fails the stream with its name, status and stderr', async () => {
    const dying = await script('dying-compressor', 'head -c 100000 >/dev/null; echo "simulated failure" >&2; exit 3');
    const stream = createExternalCompressStream(dying);
    const pid = stream.pid!;
    await expect(through(input, stream)).rejects.toThrow(/dying-compressor exited with status 3: simulated failure/);
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('a child killed by a signal fails the stream; one that cannot start fails it too', async () => {
    const killed = await script('killed-compressor', 'head -c 100000 >/dev/null; kill -9 $$');
    await expect(through(input, createExternalCompressStream(killed))).rejects.toThrow(/killed-compressor was killed by SIGKILL/);
    const missing = { command: join(dir, 'no-such-compressor'), args: [] };
    await expect(through(input, createExternalCompressStream(missing))).rejects.toThrow(/no-such-compressor could not run: .*ENOENT/);
  });

  it('a cancelled pipeline kills the child (no process left behind)', async () => {
    const slow = await script('slow-compressor', 'exec cat');
    const stream = createExternalCompressStream(slow);
    const pid = stream.pid!;
    const controller = new AbortController();
    const source = new PassThrough();
    source.write(input.subarray(0, 1024));
    const never = new Writable({ highWaterMark: 1, write: () => {} }); // never calls back: the pipeline stalls
    const running = abortablePipeline(controller.signal, source, stream, never);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(isAlive(pid)).toBe(true);
    controller.abort(new Error('cancelled by test'));
    await expect(running).rejects.toThrow();
    expect(await waitUntilGone(pid)).toBe(true);
  });
});
