// Walks the events of a binary log file. Every event starts with a 19-byte header: timestamp (4 bytes, seconds),
// type (1), server id (4), event length (4, header and checksum included), next position (4), flags (2), all
// little-endian; the file starts with the 4 magic bytes `\xfebin`. The stream needs only two things from it: where
// the last whole event ends (a partial copy is cut there, never inside an event) and the newest event time.
import { open } from 'node:fs/promises';

export const BINLOG_MAGIC = Buffer.from([0xfe, 0x62, 0x69, 0x6e]);
const HEADER_BYTES = 19;
const READ_BYTES = 1024 * 1024;

/** How far a file has been walked; resumable, since the bytes of a binary log never change once written. */
export interface EventScan {
  /** End of the last whole event (4 when none: just the magic bytes). */
  end: number;
  /** Newest event timestamp seen, in Unix seconds (0 when no event yet). */
  newestSeconds: number;
  events: number;
}

export const EMPTY_SCAN: EventScan = { end: BINLOG_MAGIC.length, newestSeconds: 0, events: 0 };

/**
 * Walks whole events of `file` from `from` (a previous scan of the same file) up to `size` bytes. Throws when the
 * file does not start with the magic bytes or an event length is impossible (not a binary log, or corrupt).
 */
export async function scanEvents(file: string, size: number, from: EventScan = EMPTY_SCAN): Promise<EventScan> {
  const handle = await open(file, 'r');
  try {
    if (from.end === BINLOG_MAGIC.length) {
      const magic = Buffer.alloc(BINLOG_MAGIC.length);
      const { bytesRead } = await handle.read(magic, 0, magic.length, 0);
      if (bytesRead < magic.length) return { ...EMPTY_SCAN };
      if (!magic.equals(BINLOG_MAGIC)) throw new Error(`${file} is not a binary log (no magic bytes)`);
    }
    let { end, newestSeconds, events } = from;
    const buffer = Buffer.alloc(READ_BYTES);
    while (end + HEADER_BYTES <= size) {
      // Read a window starting at the next event; events longer than the window are skipped by their length.
      const { bytesRead } = await handle.read(buffer, 0, Math.min(READ_BYTES, size - end), end);
      let offset = 0;
      while (offset + HEADER_BYTES <= bytesRead) {
        const length = buffer.readUInt32LE(offset + 9);
        if (length < HEADER_BYTES) throw new Error(`${file}: impossible event length ${length} at byte ${end + offset}`);
        if (end + offset + length > size) break; // the last event is not whole yet
        newestSeconds = Math.max(newestSeconds, buffer.readUInt32LE(offset));
        events++;
        offset += length;
      }
      if (offset === 0) {
        // The next event is longer than the window or not whole: it is whole when its length fits in the file.
        const length = buffer.readUInt32LE(9);
        if (length < HEADER_BYTES) throw new Error(`${file}: impossible event length ${length} at byte ${end}`);
        if (end + length > size) break;
        newestSeconds = Math.max(newestSeconds, buffer.readUInt32LE(0));
        events++;
        offset = length;
      }
      end += offset;
    }
    return { end, newestSeconds, events };
  } finally {
    await handle.close();
  }
}
