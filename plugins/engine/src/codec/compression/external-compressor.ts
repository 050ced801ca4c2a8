// ZSTD and GZIP in a child process (`zstd -T0`, `pigz`) when the program is installed (issue 42, lever 1). The
// in-process codec compresses 512 KiB frames on libuv's thread pool, and every frame makes two trips between that
// pool and the main thread; `zstd -T0` and `pigz` use every core with no such hops, and the main thread only moves
// the compressed stream on. Their output is a standard zstd frame / gzip member, which every reader of a backup
// already decodes (engine restore and verify, the recovery kit: both read one or many frames). Reasons and figures:
// docs/formats/compression.md "External compressor" and docs/benchmarks.md.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Duplex, type Readable, type Writable } from 'node:stream';
import { CODEC_LEVELS, type CompressionCodec } from './codecs.js';

/** The environment variable that turns the external compressor off (`off`, `0`, `false`, `no`). */
export const EXTERNAL_COMPRESSOR_ENV = 'HOLDFAST_EXTERNAL_COMPRESSOR';

/** The program and arguments that compress stdin to stdout. */
export interface ExternalCompressor {
  command: string;
  args: string[];
}

/** What a job asks of its codec (level and ZSTD threads as the job stores them: null = the default). */
export interface ExternalCompressorRequest {
  codec: CompressionCodec;
  level?: number | null;
  threads?: number | null;
}

const OFF_VALUES = new Set(['off', '0', 'false', 'no']);

/**
 * True unless HOLDFAST_EXTERNAL_COMPRESSOR turns the external compressor off. (It was opt-in for a few hours on
 * 2026-12-07 while a damaged pigz-written MariaDB backup's restore hung; the cause was the restore run waiting on a
 * pipeline its source had stopped reading, fixed in plugins/engine/src/restore/feed-restore.ts, whatever the codec.)
 */
export function externalCompressorEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[EXTERNAL_COMPRESSOR_ENV]?.trim().toLowerCase();
  return value === undefined || value === '' || !OFF_VALUES.has(value);
}

/** The full path of an executable on PATH, or null. Looked up per run (a program installed later is found). */
export function findOnPath(program: string, path = process.env.PATH ?? ''): string | null {
  for (const directory of path.split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The child process to compress with for this codec, or null for the in-process codec: the codec has no external
 * program (NONE, BROTLI), the switch is off, or the program is not installed. Same level as the job's; ZSTD uses the
 * job's thread count when it names one, else every core (`-T0`, the operator's pipeline).
 */
export function externalCompressorFor(request: ExternalCompressorRequest, env: NodeJS.ProcessEnv = process.env): ExternalCompressor | null {
  if (!externalCompressorEnabled(env)) return null;
  if (request.codec === 'ZSTD') {
    const command = findOnPath('zstd', env.PATH);
    if (!command) return null;
    const level = request.level ?? CODEC_LEVELS.ZSTD.default;
    return { command, args: [`-${level}`, `-T${request.threads ?? 0}`, '-q', '-c'] };
  }
  if (request.codec === 'GZIP') {
    const command = findOnPath('pigz', env.PATH);
    if (!command) return null;
    const level = request.level ?? CODEC_LEVELS.GZIP.default;
    // -n: no file name or time stamp in the header, like Node's gzip (stdin has neither anyway).
    return { command, args: [`-${level}`, '-n', '-c'] };
  }
  return null;
}

/** Keeps the last 2,000 characters a child writes to `stderr`, for the error message of a failed child. */
export function keepStderrTail(stderr: Readable): () => string {
  let tail = '';
  stderr.on('data', (data: Buffer) => {
    tail = `${tail}${data.toString()}`.slice(-2000);
  });
  return () => tail;
}

/** The error of a child that did not exit with status 0: `the <role> <label> was killed by SIGKILL: <stderr>`. */
export function childExitError(role: string, label: string, code: number | null, signal: NodeJS.Signals | null, stderrTail: string): Error {
  const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
  const detail = stderrTail.trim();
  return new Error(`the ${role} ${label} ${how}${detail ? `: ${detail}` : ''}`);
}

/** A short name for logs: `zstd -3 -T0`. */
export function describeExternalCompressor(compressor: ExternalCompressor): string {
  const program = compressor.command.split(/[\\/]/).pop() ?? compressor.command;
  return [program, ...compressor.args.filter((arg) => arg !== '-q' && arg !== '-c' && arg !== '-n')].join(' ');
}

type Child = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * A Duplex over a compressing child: what is written goes to its stdin, its stdout is what is read. The readable side
 * ends only after the child exited with status 0; any other exit (a status, a signal, a program that could not
 * start) destroys the stream with an error naming the program and its last stderr, so the backup fails instead of
 * storing a truncated file. Destroying the stream (a failed pipeline, a cancel) kills the child; no temp files.
 */
export class ExternalCompressStream extends Duplex {
  private readonly child: Child;
  private readonly label: string;
  private readonly stderrTail: () => string;
  private exited = false;
  private waitingForDrain: ((error?: Error | null) => void) | null = null;
  private inputReleased = false;

  constructor(compressor: ExternalCompressor) {
    super();
    this.label = describeExternalCompressor(compressor);
    this.child = spawn(compressor.command, compressor.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) this.child.stdout.pause();
    });
    this.stderrTail = keepStderrTail(this.child.stderr);
    // A broken pipe only says the child stopped reading; its exit status (below) says why.
    this.child.stdin.on('error', () => {});
    this.child.stdin.on('drain', () => this.releaseWrite());
    this.child.on('error', (error) => {
      this.exited = true;
      this.destroy(new Error(`the compressor ${this.label} could not run: ${error.message}`, { cause: error }));
    });
    // 'close' comes after the child's stdout ended, so every byte it wrote has been pushed by then.
    this.child.on('close', (code, signal) => {
      this.exited = true;
      if (this.destroyed) return;
      if (code === 0) {
        this.push(null);
        return;
      }
      this.destroy(childExitError('compressor', this.label, code, signal, this.stderrTail()));
    });
  }

  /** The child's process id (tests watch it). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * The child's stdin, to give to a source's own child process as its stdout (DumpOptions.compressorInput): the dump
   * then flows from one child to the other through an OS pipe. Call {@link releaseInput} once that child has it.
   */
  get input(): Writable {
    return this.child.stdin;
  }

  /**
   * Closes this process's end of the child's stdin, so the compressor sees the end of its input once the source's
   * child (which holds its own copy) exits; nothing more is written into this stream.
   */
  releaseInput(): void {
    this.inputReleased = true;
    this.child.stdin.destroy();
    this.end();
  }

  override _read(): void {
    this.child.stdout.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.child.stdin.write(chunk)) callback();
    else this.waitingForDrain = callback;
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.inputReleased) this.child.stdin.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.waitingForDrain = null;
    if (!this.exited) {
      this.child.stdin.destroy();
      this.child.kill('SIGKILL');
    }
    callback(error);
  }

  private releaseWrite(): void {
    const callback = this.waitingForDrain;
    this.waitingForDrain = null;
    callback?.();
  }
}

/** A compressing stage running `compressor` in a child process. */
export function createExternalCompressStream(compressor: ExternalCompressor): ExternalCompressStream {
  return new ExternalCompressStream(compressor);
}
