// Token stream encoders (MS-TDS 2.2.7): the server side of what a SQL batch, a login and an attention get back.
// Integers are little-endian unless noted; B_VARCHAR is a byte count of UCS-2 characters, US_VARCHAR a 16-bit one.

const TOKEN = { COLMETADATA: 0x81, ERROR: 0xaa, INFO: 0xab, LOGINACK: 0xad, ROW: 0xd1, ENVCHANGE: 0xe3, DONE: 0xfd } as const;

/** DONE status bits (2.2.7.6). */
export const DONE_STATUS = { FINAL: 0x00, MORE: 0x01, ERROR: 0x02, COUNT: 0x10, ATTN: 0x20 } as const;

/** Latin1_General_CI_AS: LCID 0x0409, flags 0xD0, version 0, sort id 0x34 (2.2.5.1.2). */
const COLLATION = Buffer.from([0x09, 0x04, 0xd0, 0x00, 0x34]);

function u8(value: number): Buffer {
  return Buffer.from([value]);
}
function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
}
function i32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32LE(value);
  return buffer;
}
function bVarChar(text: string): Buffer {
  return Buffer.concat([u8(text.length), Buffer.from(text, 'utf16le')]);
}
function usVarChar(text: string): Buffer {
  return Buffer.concat([u16(text.length), Buffer.from(text, 'utf16le')]);
}
/** A token with a 16-bit length prefix. */
function sized(token: number, body: Buffer): Buffer {
  return Buffer.concat([u8(token), u16(body.length), body]);
}

/** A column of a result set: nvarchar(4000) or int (INTN with length 4). */
export interface Column {
  name: string;
  type: 'nvarchar' | 'int';
}

export type Cell = string | number | null;

/** COLMETADATA followed by one ROW per row (2.2.7.4, 2.2.7.19). */
export function resultSet(columns: Column[], rows: Cell[][]): Buffer {
  const meta = columns.map((column) =>
    Buffer.concat([
      Buffer.alloc(4), // UserType
      u16(0x0001), // Flags: fNullable
      column.type === 'nvarchar' ? Buffer.concat([u8(0xe7), u16(8000), COLLATION]) : Buffer.from([0x26, 4]),
      bVarChar(column.name),
    ]),
  );
  const encodedRows = rows.map((row) =>
    Buffer.concat([
      u8(TOKEN.ROW),
      ...columns.map((column, index) => {
        const value = row[index] ?? null;
        if (column.type === 'int') return value === null ? u8(0) : Buffer.concat([u8(4), i32(Number(value))]);
        if (value === null) return u16(0xffff);
        const text = Buffer.from(String(value), 'utf16le');
        return Buffer.concat([u16(text.length), text]);
      }),
    ]),
  );
  return Buffer.concat([u8(TOKEN.COLMETADATA), u16(columns.length), ...meta, ...encodedRows]);
}

/** DONE (2.2.7.6): status, current command, 64-bit row count. */
export function done(status: number, rowCount = 0): Buffer {
  const count = Buffer.alloc(8);
  count.writeBigUInt64LE(BigInt(rowCount));
  return Buffer.concat([u8(TOKEN.DONE), u16(status), u16(0xc1), count]);
}

/** ERROR or INFO (2.2.7.10, 2.2.7.13): number, state, class, message, server, procedure, line. */
export function message(kind: 'error' | 'info', number: number, text: string, severity = kind === 'error' ? 16 : 0): Buffer {
  const body = Buffer.concat([i32(number), u8(1), u8(severity), usVarChar(text), bVarChar('FAKE-MSSQL'), bVarChar(''), i32(1)]);
  return sized(kind === 'error' ? TOKEN.ERROR : TOKEN.INFO, body);
}

/** LOGINACK (2.2.7.14) for TDS 7.4, announcing a product version. */
export function loginAck(major: number, minor: number, build: number): Buffer {
  const tdsVersion = Buffer.alloc(4);
  tdsVersion.writeUInt32BE(0x74000004);
  const body = Buffer.concat([u8(1), tdsVersion, bVarChar('Microsoft SQL Server'), Buffer.from([major, minor, build >> 8, build & 0xff])]);
  return sized(TOKEN.LOGINACK, body);
}

/** ENVCHANGE (2.2.7.9) of a string value: 1 database, 4 packet size. */
export function envChange(type: 1 | 4, next: string, previous: string): Buffer {
  return sized(TOKEN.ENVCHANGE, Buffer.concat([u8(type), bVarChar(next), bVarChar(previous)]));
}
