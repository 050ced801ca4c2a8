// The server's WAL insert position as a record end (flush-clock.ts). pg_current_wal_insert_lsn() never names a page
// start: when the last record ended exactly on a page boundary and nothing followed yet, it points just past the
// next page's header. A copy's last whole record ends at that boundary (wal-end.ts), so the reading is moved back to
// it; otherwise a quiet server whose last record ended on a boundary would never see its window reach the reading.

/** Page header sizes on 64-bit servers: XLogLongPageHeaderData (a segment's first page) and XLogPageHeaderData, MAXALIGNed. */
const LONG_PAGE_HEADER = 40n;
const SHORT_PAGE_HEADER = 24n;

/** `lsn` moved back to the page boundary when it points just past a page header; unchanged otherwise. */
export function insertPositionAsRecordEnd(lsn: bigint, blockSize: number, segmentSize: number): bigint {
  if (segmentSize > 0 && lsn % BigInt(segmentSize) === LONG_PAGE_HEADER) return lsn - LONG_PAGE_HEADER;
  if (blockSize > 0 && lsn % BigInt(blockSize) === SHORT_PAGE_HEADER) return lsn - SHORT_PAGE_HEADER;
  return lsn;
}
