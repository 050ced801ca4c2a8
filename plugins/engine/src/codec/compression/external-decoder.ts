// ZSTD and GZIP backups decoded in a child process (`zstd -d`, `pigz -d`) for sources that take the decoded bytes as
// a pipe (RestoreOptions.decodedInput, issue 42): the directory source hands that pipe to its own extracting child,
// so the decoded tar never passes through the server's process. The same switch as the compressor's turns it off.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { CompressionCodec } from './codecs.js';
import { childExitError, describeExternalCompressor, externalCompressorEnabled, findOnPath, keepStderrTail, type ExternalCompressor } from './external-compressor.js';

/** The program and arguments that decode stdin to stdout for this codec, or null (none installed, switched off). */
export function externalDecoderFor(codec: CompressionCodec, env: NodeJS.ProcessEnv = process.env): ExternalCompressor | null {
  if (!externalCompressorEnabled(env)) return null;
  const program = codec === 'ZSTD' ? 'zstd' : codec === 'GZIP' ? 'pigz' : null;
  const command = program ? findOnPath(program, env.PATH) : null;
  // zstd and pigz both read concatenated frames / members, as every backup writer of Holdfast may produce them.
  return command ? { command, args: ['-d', '-q', '-c'] } : null;
}

type Child = ChildProcessByStdio<Writable, Readable | null, Readable>;

/**
 * A decoding child: the engine writes the stored bytes into `stdin`; its output goes into `output` when one is given
 * (the stdin of a source's own child process: the decoded bytes then never enter this process), else to `stdout`.
 * `exited` resolves when the child exited with status 0 and rejects on anything else (a status, a signal, a program
 * that could not start), naming the program and its last stderr.
 */
export class ExternalDecoder {
  readonly label: string;
  readonly exited: Promise<void>;
  private readonly child: Child;
  private finished = false;

  constructor(decoder: ExternalCompressor, output?: Writable) {
    this.label = describeExternalCompressor(decoder);
    this.child = spawn(decoder.command, decoder.args, { stdio: ['pipe', output ?? 'pipe', 'pipe'] }) as Child;
    const stderrTail = keepStderrTail(this.child.stderr);
    // A broken pipe only says the child stopped reading; its exit status says why.
    this.child.stdin.on('error', () => {});
    this.child.stdout?.on('error', () => {});
    this.exited = new Promise<void>((resolve, reject) => {
      this.child.on('error', (error) => {
        this.finished = true;
        reject(new Error(`the decompressor ${this.label} could not run: ${error.message}`, { cause: error }));
      });
      this.child.on('exit', (code, signal) => {
        this.finished = true;
        if (code === 0) return resolve();
        reject(childExitError('decompressor', this.label, code, signal, stderrTail()));
      });
    });
    this.exited.catch(() => undefined);
  }

  /** What the engine writes the stored (decrypted) bytes into. */
  get stdin(): Writable {
    return this.child.stdin;
  }

  /** True when the child writes into the output it was given (not into {@link stdout}). */
  get writesIntoOutput(): boolean {
    return this.child.stdout === null;
  }

  /** The decoded bytes, when no `output` was given. */
  get stdout(): Readable {
    if (!this.child.stdout) throw new Error('the decoder writes into the output it was given');
    return this.child.stdout;
  }

  /** The child's process id (tests watch it). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Stops the child (a failed or cancelled restore); its reader then sees the end of its input. */
  kill(): void {
    if (this.finished) return;
    this.child.stdin.destroy();
    this.child.kill('SIGKILL');
  }
}
