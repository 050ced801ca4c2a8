// PRELOGIN (MS-TDS 2.2.6.5) and LOGIN7 (2.2.6.4) as the fake server sees them.

const PRELOGIN = { VERSION: 0x00, ENCRYPTION: 0x01, INSTOPT: 0x02, THREADID: 0x03, MARS: 0x04, TERMINATOR: 0xff } as const;
/** ENCRYPT_NOT_SUP: the fake has no certificate, so the login and everything after it travel in clear. */
const ENCRYPT_NOT_SUP = 0x02;

/** The encryption byte a client asked for in its PRELOGIN (0 off, 1 on, 2 not supported, 3 required). */
export function requestedEncryption(payload: Buffer): number | undefined {
  for (let offset = 0; payload[offset] !== PRELOGIN.TERMINATOR && offset + 5 <= payload.length; offset += 5) {
    if (payload[offset] === PRELOGIN.ENCRYPTION) return payload[payload.readUInt16BE(offset + 1)];
  }
  return undefined;
}

/** The server's PRELOGIN answer: version, no encryption, no instance, thread id 0, MARS off. */
export function preloginResponse(major: number, minor: number, build: number): Buffer {
  const options: [number, Buffer][] = [
    [PRELOGIN.VERSION, Buffer.from([major, minor, build >> 8, build & 0xff, 0, 0])],
    [PRELOGIN.ENCRYPTION, Buffer.from([ENCRYPT_NOT_SUP])],
    [PRELOGIN.INSTOPT, Buffer.from([0])],
    [PRELOGIN.THREADID, Buffer.alloc(4)],
    [PRELOGIN.MARS, Buffer.from([0])],
  ];
  const headerLength = options.length * 5 + 1;
  const header = Buffer.alloc(headerLength);
  let dataOffset = headerLength;
  options.forEach(([token, data], index) => {
    header[index * 5] = token;
    header.writeUInt16BE(dataOffset, index * 5 + 1);
    header.writeUInt16BE(data.length, index * 5 + 3);
    dataOffset += data.length;
  });
  header[headerLength - 1] = PRELOGIN.TERMINATOR;
  return Buffer.concat([header, ...options.map(([, data]) => data)]);
}

/** What a LOGIN7 carried. */
export interface Login7 {
  packetSize: number;
  hostName: string;
  userName: string;
  password: string;
  appName: string;
  serverName: string;
  database: string;
}

/** Reads one (offset, length in characters) pair of the OffsetLength block and its UCS-2 text. */
function field(payload: Buffer, at: number): Buffer {
  const offset = payload.readUInt16LE(at);
  const chars = payload.readUInt16LE(at + 2);
  return payload.subarray(offset, offset + chars * 2);
}

/** The password is sent with every byte's nibbles swapped and XORed with 0xA5 (2.2.6.4); this undoes it. */
function unscramble(bytes: Buffer): string {
  const plain = Buffer.from(bytes.map((byte) => {
    const swapped = byte ^ 0xa5;
    return ((swapped & 0x0f) << 4) | (swapped >> 4);
  }));
  return plain.toString('utf16le');
}

/** Decodes the fixed part and the OffsetLength block of a LOGIN7 message. */
export function parseLogin7(payload: Buffer): Login7 {
  return {
    packetSize: payload.readUInt32LE(8),
    hostName: field(payload, 36).toString('utf16le'),
    userName: field(payload, 40).toString('utf16le'),
    password: unscramble(field(payload, 44)),
    appName: field(payload, 48).toString('utf16le'),
    serverName: field(payload, 52).toString('utf16le'),
    database: field(payload, 68).toString('utf16le'),
  };
}
