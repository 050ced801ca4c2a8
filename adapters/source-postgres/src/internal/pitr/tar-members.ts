// Watches a tar stream as it passes, without holding it: it follows the 512-byte member headers and keeps the text of
// the few small members a base backup needs to describe itself (backup_label at the start, the end of
// backup_manifest, whose last lines hold the WAL range). pg_basebackup writes ustar headers; GNU long names ('L') are
// followed too, in case a future version writes them.

const BLOCK = 512;

/** What to keep of a member: all of it (up to a limit) or only its last bytes. */
export interface KeepRule {
  /** Bytes kept; beyond them the start is dropped (`tail`) or the member is cut (`head`). */
  limit: number;
  from: 'head' | 'tail';
}

/** The kept text of the members asked for, and when their headers went by. */
export class TarMemberWatcher {
  private readonly kept = new Map<string, Buffer>();
  /** When each watched member's header went by. */
  private readonly seenAt = new Map<string, Date>();

  private header = Buffer.alloc(0);
  private remaining = 0;
  private padding = 0;
  private current: { name: string; rule?: KeepRule; chunks: Buffer[]; bytes: number } | undefined;
  private longName: string | undefined;
  private ended = false;

  constructor(private readonly keep: Readonly<Record<string, KeepRule>>) {}

  /** The kept bytes of `name`, or undefined when it did not go by. */
  member(name: string): Buffer | undefined {
    return this.kept.get(name);
  }

  /** When the header of `name` went by. */
  timeOf(name: string): Date | undefined {
    return this.seenAt.get(name);
  }

  /** Feeds the next piece of the stream. */
  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && !this.ended) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - offset);
        this.collect(chunk.subarray(offset, offset + take));
        this.remaining -= take;
        offset += take;
        if (this.remaining === 0) this.finishMember();
      } else if (this.padding > 0) {
        const skip = Math.min(this.padding, chunk.length - offset);
        this.padding -= skip;
        offset += skip;
      } else {
        const take = Math.min(BLOCK - this.header.length, chunk.length - offset);
        this.header = Buffer.concat([this.header, chunk.subarray(offset, offset + take)]);
        offset += take;
        if (this.header.length === BLOCK) {
          const block = this.header;
          this.header = Buffer.alloc(0);
          this.startMember(block);
        }
      }
    }
  }

  private startMember(block: Buffer): void {
    if (block.every((byte) => byte === 0)) {
      this.ended = true; // the end-of-archive marker
      return;
    }
    const type = String.fromCharCode(block[156]!);
    const size = readSize(block.subarray(124, 136));
    let name = this.longName ?? headerName(block);
    this.longName = undefined;
    if (type === 'L') name = '\0long-name';
    const rule = type === 'L' ? { limit: 65_536, from: 'head' as const } : this.keep[name];
    if (rule) this.seenAt.set(name, new Date());
    this.current = { name, rule, chunks: [], bytes: 0 };
    this.remaining = size;
    this.padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (size === 0) this.finishMember();
  }

  private collect(piece: Buffer): void {
    const current = this.current;
    if (!current?.rule) return;
    if (current.rule.from === 'head') {
      if (current.bytes >= current.rule.limit) return;
      const part = piece.subarray(0, current.rule.limit - current.bytes);
      current.chunks.push(Buffer.from(part));
      current.bytes += part.length;
      return;
    }
    current.chunks.push(Buffer.from(piece));
    current.bytes += piece.length;
    // Keep the tail bounded: once twice the limit is held, keep only the last `limit` bytes.
    if (current.bytes > current.rule.limit * 2) {
      const joined = Buffer.concat(current.chunks).subarray(-current.rule.limit);
      current.chunks = [joined];
      current.bytes = joined.length;
    }
  }

  private finishMember(): void {
    const current = this.current;
    this.current = undefined;
    if (!current?.rule) return;
    let data = Buffer.concat(current.chunks);
    if (current.rule.from === 'tail') data = data.subarray(-current.rule.limit);
    if (current.name === '\0long-name') this.longName = data.toString('utf8').replace(/\0.*$/s, '');
    else this.kept.set(current.name, data);
  }
}

/** ustar name: prefix (when set) + '/' + name, both NUL-terminated fields. */
function headerName(block: Buffer): string {
  const field = (start: number, length: number) => {
    const raw = block.subarray(start, start + length);
    const end = raw.indexOf(0);
    return raw.subarray(0, end === -1 ? length : end).toString('utf8');
  };
  const name = field(0, 100);
  const isUstar = block.subarray(257, 262).toString('latin1') === 'ustar';
  const prefix = isUstar ? field(345, 155) : '';
  return prefix ? `${prefix}/${name}` : name;
}

/** The size field: octal text, or base-256 (high bit set) for members of 8 GiB and more. */
function readSize(field: Buffer): number {
  if ((field[0]! & 0x80) !== 0) {
    let value = 0;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    return value;
  }
  const text = field.toString('latin1').replace(/\0.*$/s, '').trim();
  return text ? Number.parseInt(text, 8) : 0;
}
