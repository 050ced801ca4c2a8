#!/usr/bin/env node
// holdfast-decrypt: decrypts a Holdfast encrypted backup (format HFENC v1) without Holdfast.
// One file, Node.js >= 18, no dependencies beyond Node's own modules. The format is described in README.md next to
// this file. Memory stays flat whatever the backup size: one chunk is held at a time.
import { createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

const USAGE = `Usage: node holdfast-decrypt.mjs [options] <backup-file | ->

Decrypts a Holdfast encrypted backup to standard output or to --out.

Options:
  --key-file <path>     file holding the key (64 hex characters or base64; lines starting with # are ignored)
                        without it the key is read from the HOLDFAST_KEY environment variable
  --out <path>          write here instead of standard output (refuses to overwrite unless --force)
  --force               overwrite --out if it exists
  --decompress <codec>  gzip, brotli, zstd or none; default: read from <backup-file>.meta.json when present, else none
  --help                show this text

Exit codes: 0 done, 2 usage or key format, 3 wrong key, 4 damaged or not a Holdfast file, 5 decompression failed,
6 file could not be read or written.`;

const EXIT = { usage: 2, wrongKey: 3, damaged: 4, decompress: 5, io: 6 };
const MAGIC = Buffer.from('HFENC', 'ascii');
const HEADER_LENGTH = 62;
const TAG_LENGTH = 16;
const MIN_CHUNK = 16;
const MAX_CHUNK = 16 * 1024 * 1024;

class KitError extends Error {
  constructor(exitCode, message) {
    super(message);
    this.exitCode = exitCode;
  }
}

function parseKey(text, origin) {
  const value = text
    .split(/\r?\n/)
    .filter((line) => !line.trim().startsWith('#'))
    .join('')
    .trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const key = Buffer.from(value, /[-_]/.test(value) ? 'base64url' : 'base64');
    if (key.length === 32) return key;
  }
  throw new KitError(EXIT.usage, `the key in ${origin} is not 64 hex characters or the base64 form of 32 bytes`);
}

function readKey(keyFile) {
  if (keyFile) {
    let text;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (error) {
      throw new KitError(EXIT.io, `cannot read key file ${keyFile}: ${error.code ?? error.message}`);
    }
    return parseKey(text, `key file ${keyFile}`);
  }
  if (process.env.HOLDFAST_KEY) return parseKey(process.env.HOLDFAST_KEY, 'HOLDFAST_KEY');
  throw new KitError(EXIT.usage, 'no key given: pass --key-file <path> or set HOLDFAST_KEY');
}

function fingerprintOf(key) {
  return createHmac('sha256', key).update('holdfast key fingerprint').digest().subarray(0, 16);
}

/** The decrypting Transform: header, then records of chunkSize + 16 bytes; the last one ends at end of input. */
function createDecrypter(profileKey) {
  let headerBytes = Buffer.alloc(0);
  let state; // { dataKey, noncePrefix, record }
  let filled = 0;
  let index = 0n;

  const fail = (code, message) => new KitError(code, message);
  const checkMagic = () => {
    const n = Math.min(headerBytes.length, MAGIC.length);
    if (!headerBytes.subarray(0, n).equals(MAGIC.subarray(0, n))) throw fail(EXIT.damaged, 'not a Holdfast encrypted file');
    if (headerBytes.length > 5 && headerBytes[5] !== 1) {
      throw fail(EXIT.damaged, `unsupported format version ${headerBytes[5]} (this script reads version 1)`);
    }
  };
  const startRecords = () => {
    const chunkSize = headerBytes.readUInt32BE(6);
    if (chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK) {
      throw fail(EXIT.damaged, `corrupt header: chunk size ${chunkSize} out of range`);
    }
    const expected = headerBytes.subarray(46, 62);
    const given = fingerprintOf(profileKey);
    if (!given.equals(expected)) {
      throw fail(
        EXIT.wrongKey,
        `wrong key: this backup needs the key with fingerprint ${expected.toString('hex')}, ` +
          `the given key has fingerprint ${given.toString('hex')}`,
      );
    }
    const salt = headerBytes.subarray(10, 42);
    const dataKey = Buffer.from(hkdfSync('sha256', profileKey, salt, Buffer.from('holdfast-enc v1 data key'), 32));
    state = { dataKey, noncePrefix: headerBytes.subarray(42, 46), record: Buffer.alloc(chunkSize + TAG_LENGTH) };
  };
  const tryOpen = (record, isFinal) => {
    const nonce = Buffer.alloc(12);
    state.noncePrefix.copy(nonce, 0);
    nonce.writeBigUInt64BE(index, 4);
    const aad = Buffer.alloc(HEADER_LENGTH + 9);
    headerBytes.copy(aad, 0);
    aad.writeBigUInt64BE(index, HEADER_LENGTH);
    aad[HEADER_LENGTH + 8] = isFinal ? 1 : 0;
    const decipher = createDecipheriv('aes-256-gcm', state.dataKey, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(record.subarray(record.length - TAG_LENGTH));
    const body = decipher.update(record.subarray(0, record.length - TAG_LENGTH));
    try {
      return Buffer.concat([body, decipher.final()]);
    } catch {
      return undefined;
    }
  };
  const open = (record, isFinal) => {
    const plaintext = tryOpen(record, isFinal);
    if (plaintext) {
      index += 1n;
      return plaintext;
    }
    if (tryOpen(record, !isFinal)) {
      throw fail(EXIT.damaged, isFinal ? 'truncated: final chunk missing' : 'unexpected data after the final chunk');
    }
    throw fail(EXIT.damaged, `chunk ${index} failed authentication`);
  };

  return new Transform({
    transform(data, _encoding, callback) {
      try {
        let offset = 0;
        if (!state) {
          offset = Math.min(HEADER_LENGTH - headerBytes.length, data.length);
          headerBytes = Buffer.concat([headerBytes, data.subarray(0, offset)]);
          checkMagic();
          if (headerBytes.length < HEADER_LENGTH) return callback();
          startRecords();
        }
        const { record } = state;
        while (offset < data.length) {
          if (filled === record.length) {
            this.push(open(record, false));
            filled = 0;
          }
          const copied = data.copy(record, filled, offset, offset + record.length - filled);
          filled += copied;
          offset += copied;
        }
        callback();
      } catch (error) {
        callback(error);
      }
    },
    flush(callback) {
      try {
        if (!state) {
          checkMagic();
          throw fail(EXIT.damaged, headerBytes.length < MAGIC.length ? 'not a Holdfast encrypted file' : 'truncated: header incomplete');
        }
        if (filled === 0) throw fail(EXIT.damaged, 'truncated: final chunk missing');
        if (filled < TAG_LENGTH) throw fail(EXIT.damaged, `truncated: chunk ${index} is incomplete`);
        this.push(open(state.record.subarray(0, filled), true));
        callback();
      } catch (error) {
        callback(error);
      }
    },
  });
}

const DECOMPRESSORS = {
  gzip: () => zlib.createGunzip(),
  brotli: () => zlib.createBrotliDecompress(),
  zstd: () => {
    if (typeof zlib.createZstdDecompress !== 'function') {
      throw new KitError(EXIT.usage, 'zstd needs Node.js 22.15 or newer; or use --decompress none and pipe into `zstd -d`');
    }
    return zlib.createZstdDecompress();
  },
};

/** Codec from the sidecar (`compression: "GZIP"` or `compression: { codec: "GZIP" }`), or undefined. */
function codecFromSidecar(file) {
  const path = `${file}.meta.json`;
  if (file === '-' || !existsSync(path)) return undefined;
  try {
    const meta = JSON.parse(readFileSync(path, 'utf8'));
    const raw = typeof meta.compression === 'string' ? meta.compression : meta.compression?.codec;
    if (typeof raw !== 'string') return undefined;
    const codec = raw.toLowerCase();
    if (codec !== 'none') process.stderr.write(`holdfast-decrypt: ${path} says the backup is ${codec}-compressed; decompressing\n`);
    return codec;
  } catch (error) {
    process.stderr.write(`holdfast-decrypt: ignoring unreadable sidecar ${path}: ${error.message}\n`);
    return undefined;
  }
}

// Hand-written rather than util.parseArgs, which early Node 18 releases lack.
const VALUE_OPTIONS = new Set(['key-file', 'out', 'decompress']);
const FLAG_OPTIONS = new Set(['force', 'help']);

function parseCommandLine(argv) {
  const values = {};
  const positionals = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      values.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s);
    if (FLAG_OPTIONS.has(name) && inline === undefined) values[name] = true;
    else if (VALUE_OPTIONS.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined || value === '') throw new KitError(EXIT.usage, `--${name} needs a value\n\n${USAGE}`);
      values[name] = value;
    } else throw new KitError(EXIT.usage, `unknown option ${arg}\n\n${USAGE}`);
  }
  if (values.help) return { help: true };
  if (positionals.length !== 1) throw new KitError(EXIT.usage, `give exactly one backup file\n\n${USAGE}`);
  const decompress = values.decompress?.toLowerCase();
  if (decompress !== undefined && decompress !== 'none' && !(decompress in DECOMPRESSORS)) {
    throw new KitError(EXIT.usage, `--decompress must be gzip, brotli, zstd or none, not "${values.decompress}"`);
  }
  return { file: positionals[0], keyFile: values['key-file'], out: values.out, force: values.force === true, decompress };
}

async function main(argv) {
  const options = parseCommandLine(argv);
  if (options.help) return void process.stdout.write(`${USAGE}\n`);
  const key = readKey(options.keyFile);
  if (options.file !== '-' && !existsSync(options.file)) throw new KitError(EXIT.io, `backup file not found: ${options.file}`);
  if (options.file !== '-' && statSync(options.file).isDirectory()) throw new KitError(EXIT.io, `${options.file} is a directory`);
  if (options.out && existsSync(options.out) && !options.force) {
    throw new KitError(EXIT.io, `${options.out} exists; pass --force to overwrite it`);
  }
  if (!options.out && process.stdout.isTTY) {
    throw new KitError(EXIT.usage, 'refusing to write a backup to the terminal: use --out <path> or redirect the output');
  }
  const codec = options.decompress ?? codecFromSidecar(options.file) ?? 'none';
  if (codec !== 'none' && !(codec in DECOMPRESSORS)) throw new KitError(EXIT.usage, `unknown compression "${codec}" in the sidecar`);

  const stages = [options.file === '-' ? process.stdin : createReadStream(options.file), createDecrypter(key)];
  if (codec !== 'none') {
    const decompressor = DECOMPRESSORS[codec]();
    // Mark failures of this stage so they are reported as decompression errors, not as damage to the backup.
    decompressor.on('error', (error) => (error.isDecompression = true));
    stages.push(decompressor);
  }
  // Write to a side file and rename at the end, so a failed run never leaves a plausible-looking output behind.
  const partial = options.out ? `${options.out}.partial` : undefined;
  stages.push(partial ? createWriteStream(partial) : process.stdout);
  try {
    await pipeline(stages);
    if (partial) renameSync(partial, options.out);
  } catch (error) {
    if (partial) rmSync(partial, { force: true });
    if (error instanceof KitError) throw error;
    if (error.isDecompression) throw new KitError(EXIT.decompress, `${codec} decompression failed: ${error.message}`);
    throw new KitError(EXIT.io, `${error.code ?? 'I/O error'}: ${error.message}`);
  }
}

main(process.argv.slice(2)).then(
  () => {
    process.exitCode = 0;
  },
  (error) => {
    const exitCode = error instanceof KitError ? error.exitCode : 1;
    const tail = exitCode === EXIT.damaged || exitCode === EXIT.decompress ? ' (any output written is incomplete)' : '';
    process.stderr.write(`holdfast-decrypt: ${error.message}${tail}\n`);
    process.exit(exitCode);
  },
);
