/**
 * Credit-based flow control of the byte streams of agent calls (docs/agents.md "Protocol"): the receiver grants
 * bytes, the sender never sends more than it was granted. Neither side ever holds a whole backup: the receiver keeps
 * at most its window in flight plus its stream's buffer, the sender reads its source only as credit arrives.
 */
import { Readable } from 'node:stream';
import { DATA_CHUNK_BYTES, STREAM_WINDOW_BYTES } from './call-frames.js';

/**
 * The receiving end: a Readable fed by data frames. Bytes are granted again as the consumer reads them, so a slow
 * consumer (a slow destination) slows the sender down instead of filling memory.
 */
export class CreditedReadable extends Readable {
  /** Bytes the sender may still send (granted, not yet received). */
  private outstanding = 0;
  /** Bytes received and handed to the stream's buffer, not yet granted again. */
  private owed = 0;
  private isFinished = false;

  constructor(
    private readonly grant: (bytes: number) => void,
    private readonly window = STREAM_WINDOW_BYTES,
  ) {
    super({ highWaterMark: window });
  }

  /** Grants the first window; call once the sender knows the call (after the call or opened frame). */
  open(): void {
    this.outstanding = this.window;
    this.grant(this.window);
  }

  /** Takes the bytes of one data frame; false when the sender overran its credit (a protocol error). */
  accept(bytes: Buffer): boolean {
    if (this.isFinished || bytes.length > this.outstanding) return false;
    this.outstanding -= bytes.length;
    this.owed += bytes.length;
    if (this.push(bytes)) this.grantOwed();
    return true;
  }

  /** The sender said the stream ended. */
  finish(): void {
    if (this.isFinished) return;
    this.isFinished = true;
    this.push(null);
  }

  override _read(): void {
    this.grantOwed();
  }

  private grantOwed(): void {
    if (this.owed === 0 || this.isFinished || this.destroyed) return;
    const bytes = this.owed;
    this.owed = 0;
    this.outstanding += bytes;
    this.grant(bytes);
  }
}

/** The sending end: sends a stream in data frames as credit allows. */
export class CreditedSender {
  private credit = 0;
  private wake: (() => void) | undefined;
  private failure: Error | undefined;

  /**
   * @param write sends one data frame's bytes
   * @param congested true while the connection's own send buffer is full (a peer that grants credit but does not
   *   read must not make the sender buffer the stream in memory)
   */
  constructor(
    private readonly write: (bytes: Buffer) => void,
    private readonly congested: () => boolean = () => false,
  ) {}

  grant(bytes: number): void {
    this.credit += bytes;
    this.wakeUp();
  }

  /** Stops a running {@link send}: it rejects with `error`. */
  fail(error: Error): void {
    this.failure ??= error;
    this.wakeUp();
  }

  /** Sends every byte of `source`, never more than granted; rejects when failed or when the source errors. */
  async send(source: AsyncIterable<unknown>): Promise<number> {
    let sent = 0;
    for await (const chunk of source) {
      let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      while (bytes.length > 0) {
        await this.ready();
        const size = Math.min(this.credit, bytes.length, DATA_CHUNK_BYTES);
        this.write(bytes.subarray(0, size));
        this.credit -= size;
        sent += size;
        bytes = bytes.subarray(size);
      }
    }
    if (this.failure) throw this.failure;
    return sent;
  }

  private async ready(): Promise<void> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.credit > 0 && !this.congested()) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        // Congestion has no event of its own here: look again shortly.
        if (this.credit > 0) setTimeout(resolve, 20);
      });
      this.wake = undefined;
    }
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
