// tar-stream's header codec (its own module, not in @types/tar-stream): the directory source encodes headers with
// the very function tar-stream's pack uses, so its archives stay the same byte for byte (test/archive-golden.test.ts).
declare module 'tar-stream/headers.js' {
  interface EncodableHeader {
    name: string;
    type: string;
    size: number;
    mode: number;
    uid: number;
    gid: number;
    mtime: Date;
    linkname?: string | null;
    uname?: string;
    gname?: string;
    devmajor?: number;
    devminor?: number;
  }
  /** One 512-byte ustar header, or null when the entry needs a PAX header (non-ASCII or long name or link). */
  export function encode(header: EncodableHeader): Buffer | null;
  export function encodePax(header: { name: string; linkname?: string | null; pax?: Record<string, string> }): Buffer;
}
