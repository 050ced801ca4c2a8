import type { Socket } from 'node:net';

/**
 * The server side of the part of SOCKS5 the driver's client (the `socks` package) uses: RFC 1928 with the
 * username/password method of RFC 1929, and the CONNECT command to an IPv4, IPv6 or domain-name address.
 */
const VERSION = 0x05;
const METHOD_USER_PASSWORD = 0x02;
const NO_ACCEPTABLE_METHOD = 0xff;
const AUTH_VERSION = 0x01;
const COMMAND_CONNECT = 0x01;
const ADDRESS_IPV4 = 0x01;
const ADDRESS_DOMAIN = 0x03;
const ADDRESS_IPV6 = 0x04;

export const REPLY = { succeeded: 0x00, refused: 0x05, commandNotSupported: 0x07, addressNotSupported: 0x08 } as const;

/** A reply to the CONNECT request; the bound address is not used by the driver, so it is 0.0.0.0:0. */
export function reply(code: number): Buffer {
  return Buffer.from([VERSION, code, 0x00, ADDRESS_IPV4, 0, 0, 0, 0, 0, 0]);
}

/** Reads the handshake byte by byte as it arrives, and hands the socket back (unread bytes included) afterwards. */
export class HandshakeReader {
  private buffer = Buffer.alloc(0);
  private wanted?: { size: number; resolve: (bytes: Buffer) => void; reject: (error: Error) => void };
  private isClosed = false;

  constructor(private readonly socket: Socket) {
    socket.on('data', this.onData);
    socket.once('close', this.onClose);
  }

  /** The next `size` bytes; rejects when the client goes away first. */
  take(size: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.wanted = { size, resolve, reject };
      this.settle();
    });
  }

  /** Stops reading: the socket is paused and whatever came after the handshake is put back for the pipe. */
  release(): void {
    this.socket.pause();
    this.socket.off('data', this.onData);
    this.socket.off('close', this.onClose);
    if (this.buffer.length > 0) this.socket.unshift(this.buffer);
    this.buffer = Buffer.alloc(0);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    this.settle();
  };

  private readonly onClose = (): void => {
    this.isClosed = true;
    this.settle();
  };

  private settle(): void {
    const wanted = this.wanted;
    if (!wanted) return;
    if (this.buffer.length >= wanted.size) {
      this.wanted = undefined;
      const bytes = this.buffer.subarray(0, wanted.size);
      this.buffer = this.buffer.subarray(wanted.size);
      wanted.resolve(bytes);
    } else if (this.isClosed) {
      this.wanted = undefined;
      wanted.reject(new Error('the SOCKS client closed during the handshake'));
    }
  }
}

function ipv6(bytes: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}

/**
 * Runs the handshake up to the CONNECT request and answers its destination; undefined when the client was refused
 * (wrong version, method, credentials, command or address type), after the matching reply was sent.
 */
export async function readConnectRequest(
  socket: Socket,
  reader: HandshakeReader,
  isAllowed: (given: { user: Buffer; password: Buffer }) => boolean,
): Promise<{ host: string; port: number } | undefined> {
  const [version, methodCount] = await reader.take(2);
  const methods = await reader.take(methodCount!);
  if (version !== VERSION || !methods.includes(METHOD_USER_PASSWORD)) {
    socket.end(Buffer.from([VERSION, NO_ACCEPTABLE_METHOD]));
    return undefined;
  }
  socket.write(Buffer.from([VERSION, METHOD_USER_PASSWORD]));
  const [authVersion, userLength] = await reader.take(2);
  const user = await reader.take(userLength!);
  const password = await reader.take((await reader.take(1))[0]!);
  if (authVersion !== AUTH_VERSION || !isAllowed({ user, password })) {
    socket.end(Buffer.from([AUTH_VERSION, 0x01]));
    return undefined;
  }
  socket.write(Buffer.from([AUTH_VERSION, 0x00]));
  const [, command, , addressType] = await reader.take(4);
  let host: string;
  if (addressType === ADDRESS_IPV4) host = [...(await reader.take(4))].join('.');
  else if (addressType === ADDRESS_IPV6) host = ipv6(await reader.take(16));
  else if (addressType === ADDRESS_DOMAIN) host = (await reader.take((await reader.take(1))[0]!)).toString('utf8');
  else {
    socket.end(reply(REPLY.addressNotSupported));
    return undefined;
  }
  const port = (await reader.take(2)).readUInt16BE(0);
  if (command !== COMMAND_CONNECT) {
    socket.end(reply(REPLY.commandNotSupported));
    return undefined;
  }
  return { host, port };
}
