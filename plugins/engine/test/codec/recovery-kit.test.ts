import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { compressionSidecarInfo, type CompressionCodec } from '../../src/codec/compression/codecs.js';
import { createCompressStream } from '../../src/codec/compression/streams.js';
import { createEncryptStream } from '../../src/codec/encryption/encrypt-stream.js';
import { keyFingerprint } from '../../src/codec/encryption/format.js';
import { buildRecoveryKit } from '../../src/codec/recovery-kit.js';
import { firstDifference, makeTempDir, readVectors, runThrough } from './helpers.js';

interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs the kit's script as a real child process, as someone restoring without Holdfast would. */
function runScript(dir: string, args: string[], options: { env?: NodeJS.ProcessEnv; stdin?: Buffer } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dir, 'holdfast-decrypt.mjs'), ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, ...options.env },
      signal: AbortSignal.timeout(30_000),
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(stdout), stderr }));
    child.stdin.end(options.stdin ?? Buffer.alloc(0));
  });
}

/** Mostly compressible data with random stretches: several 64 KiB chunks even after compression. */
function original(): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < 60; i++) parts.push(Buffer.from(`row ${i} `.repeat(2_000)), randomBytes(8_192));
  return Buffer.concat(parts);
}

async function makeBackup(key: Buffer, plaintext: Buffer, codec: CompressionCodec): Promise<{ file: Buffer; meta: object }> {
  const compressed = await runThrough(createCompressStream(codec), plaintext);
  const encrypt = createEncryptStream({ key });
  const file = await runThrough(encrypt, compressed);
  return { file, meta: { compression: compressionSidecarInfo(codec), encryption: encrypt.sidecarInfo } };
}

describe('recovery kit', () => {
  const key = randomBytes(32);
  const plaintext = original();
  let dir: string;
  let removeDir: () => Promise<void>;

  beforeEach(async () => {
    ({ path: dir, remove: removeDir } = await makeTempDir());
    for (const file of await buildRecoveryKit({ key, profileName: 'Nightly\nprod' })) {
      await writeFile(join(dir, file.name), file.content, { mode: file.mode });
    }
  });
  afterEach(() => removeDir());

  it('holds the script as shipped, its README and a key file that names the profile and fingerprint', async () => {
    const files = await buildRecoveryKit({ key, profileName: 'Nightly\nprod' });
    expect(files.map((file) => [file.name, file.mode])).toEqual([
      ['holdfast-decrypt.mjs', 0o755],
      ['hfenc.mjs', 0o644],
      ['archive-reader.mjs', 0o644],
      ['archive-chain.mjs', 0o644],
      ['archive-extract.mjs', 0o644],
      ['restore-target.mjs', 0o644],
      ['containment.mjs', 0o644],
      ['decompress.mjs', 0o644],
      ['tar-unpack.mjs', 0o644],
      ['pitr-restore.mjs', 0o644],
      ['pitr-wal.mjs', 0o644],
      ['pitr-settings.mjs', 0o644],
      ['pitr-server.mjs', 0o644],
      ['mysql-pitr.mjs', 0o644],
      ['mysql-base.mjs', 0o644],
      ['mysql-binlog.mjs', 0o644],
      ['mysql-replay-watch.mjs', 0o644],
      ['mysql-server.mjs', 0o644],
      ['README.md', 0o644],
      ['holdfast-key.txt', 0o600],
    ]);
    // Every file of the kit folder ships, as it is in the repository (nothing is generated or left out).
    const kitFolder = new URL('kit/', pathToFileURL(createRequire(import.meta.url).resolve('@holdfast/recovery-kit/package.json')));
    expect((await readdir(kitFolder)).sort()).toEqual(files.slice(0, -1).map((file) => file.name).sort());
    for (const file of files.slice(0, -1)) expect(file.content, file.name).toBe(await readFile(new URL(file.name, kitFolder), 'utf8'));
    const byName = new Map(files.map((file) => [file.name, file.content]));
    expect(byName.get('README.md')).toContain('# Holdfast recovery kit');
    const keyLines = byName.get('holdfast-key.txt')?.split('\n') ?? [];
    expect(keyLines.filter((line) => !line.startsWith('#') && line !== '')).toEqual([key.toString('hex')]);
    expect(keyLines).toContain('# Encryption profile: Nightly prod');
    expect(keyLines).toContain(`# Key fingerprint: ${keyFingerprint(key).toString('hex')}`);
    expect((await stat(join(dir, 'holdfast-key.txt'))).mode & 0o777).toBe(0o600);
    await expect(buildRecoveryKit({ key: randomBytes(31) })).rejects.toThrow('encryption key must be 32 bytes, got 31');
  });

  it('decrypts and gunzips (compression read from the sidecar) into --out, byte for byte', async () => {
    const { file, meta } = await makeBackup(key, plaintext, 'GZIP');
    expect(file.length).toBeGreaterThan(3 * 65_536);
    await writeFile(join(dir, 'db.sql.gz.enc'), file);
    await writeFile(join(dir, 'db.sql.gz.enc.meta.json'), JSON.stringify(meta));
    const result = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--out', 'db.sql', 'db.sql.gz.enc']);
    expect(result.stderr).toContain('gzip-compressed; decompressing');
    expect(result.code).toBe(0);
    expect(firstDifference(await readFile(join(dir, 'db.sql')), plaintext)).toBe('identical');
    expect(await readdir(dir)).not.toContain('db.sql.partial');
  });

  it('reads the key from HOLDFAST_KEY (base64) and writes to stdout; --decompress brotli without a sidecar', async () => {
    const { file } = await makeBackup(key, plaintext, 'BROTLI');
    await writeFile(join(dir, 'db.sql.br.enc'), file);
    const result = await runScript(dir, ['--decompress', 'brotli', 'db.sql.br.enc'], {
      env: { HOLDFAST_KEY: key.toString('base64') },
    });
    expect(result.code).toBe(0);
    expect(firstDifference(result.stdout, plaintext)).toBe('identical');
  });

  it('decrypts only with --decompress none, and reads the backup from stdin with -', async () => {
    const { file, meta } = await makeBackup(key, plaintext, 'GZIP');
    await writeFile(join(dir, 'db.sql.gz.enc'), file);
    await writeFile(join(dir, 'db.sql.gz.enc.meta.json'), JSON.stringify(meta));
    const raw = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--decompress', 'none', 'db.sql.gz.enc']);
    expect(raw.code).toBe(0);
    expect(zlib.gunzipSync(raw.stdout).equals(plaintext)).toBe(true);
    const piped = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--decompress', 'gzip', '-'], { stdin: file });
    expect(piped.code).toBe(0);
    expect(firstDifference(piped.stdout, plaintext)).toBe('identical');
  });

  it('stops with exit 3 and both fingerprints on a wrong key, leaving no output', async () => {
    const { file } = await makeBackup(key, plaintext, 'NONE');
    await writeFile(join(dir, 'db.enc'), file);
    const otherKey = randomBytes(32);
    const result = await runScript(dir, ['--out', 'db.sql', 'db.enc'], { env: { HOLDFAST_KEY: otherKey.toString('hex') } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`wrong key: this backup needs the key with fingerprint ${keyFingerprint(key).toString('hex')}`);
    expect(result.stderr).not.toContain(otherKey.toString('hex'));
    expect(existsSync(join(dir, 'db.sql'))).toBe(false);
  });

  it('stops with exit 4 on a truncated or altered file and removes the partial output', async () => {
    const { file } = await makeBackup(key, plaintext, 'GZIP');
    const cases: [string, Buffer, string][] = [
      ['cut at a chunk boundary', file.subarray(0, 62 + 2 * (65_536 + 16)), 'truncated: final chunk missing'],
      ['cut inside a chunk', file.subarray(0, file.length - 1_000), 'failed authentication'],
      ['one byte altered', Buffer.concat([file.subarray(0, 70_000), Buffer.from([file[70_000]! ^ 1]), file.subarray(70_001)]), 'chunk 1 failed authentication'],
      ['not a backup', randomBytes(500), 'not a Holdfast encrypted file'],
    ];
    for (const [name, damaged, message] of cases) {
      await writeFile(join(dir, 'db.enc'), damaged);
      const result = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--decompress', 'gzip', '--out', 'db.sql', 'db.enc']);
      expect({ name, code: result.code }).toEqual({ name, code: 4 });
      expect(result.stderr, name).toContain(message);
      expect(await readdir(dir), name).not.toContain('db.sql.partial');
      expect(existsSync(join(dir, 'db.sql')), name).toBe(false);
    }
  });

  it('answers usage mistakes with exit 2 and file problems with exit 6', async () => {
    const { file } = await makeBackup(key, plaintext.subarray(0, 1000), 'NONE');
    await writeFile(join(dir, 'db.enc'), file);
    const noKey = await runScript(dir, ['db.enc']);
    expect([noKey.code, noKey.stderr]).toEqual([2, 'holdfast-decrypt: no key given: pass --key-file <path> or set HOLDFAST_KEY\n']);
    const badKey = await runScript(dir, ['db.enc'], { env: { HOLDFAST_KEY: 'abc123' } });
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain('the key in HOLDFAST_KEY is not 64 hex characters or the base64 form of 32 bytes');
    const badCodec = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--decompress', 'lzma', 'db.enc']);
    expect(badCodec.code).toBe(2);
    expect(badCodec.stderr).toContain('--decompress must be gzip, brotli, zstd or none, not "lzma"');
    const unknown = await runScript(dir, ['--key', 'x', 'db.enc']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option --key');
    const noValue = await runScript(dir, ['db.enc', '--out']);
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toContain('--out needs a value');
    const help = await runScript(dir, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.toString()).toContain('Usage: node holdfast-decrypt.mjs');
    const inline = await runScript(dir, ['--key-file=holdfast-key.txt', 'db.enc']);
    expect(inline.code).toBe(0);
    expect(inline.stdout.equals(plaintext.subarray(0, 1000))).toBe(true);
    const missing = await runScript(dir, ['--key-file', 'holdfast-key.txt', 'nope.enc']);
    expect([missing.code, missing.stderr]).toEqual([6, 'holdfast-decrypt: backup file not found: nope.enc\n']);
    await writeFile(join(dir, 'taken.sql'), 'keep me');
    const exists = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--out', 'taken.sql', 'db.enc']);
    expect(exists.code).toBe(6);
    expect(await readFile(join(dir, 'taken.sql'), 'utf8')).toBe('keep me');
    const forced = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--force', '--out', 'taken.sql', 'db.enc']);
    expect(forced.code).toBe(0);
    expect((await readFile(join(dir, 'taken.sql'))).equals(plaintext.subarray(0, 1000))).toBe(true);
  });

  it('reproduces every test vector of the format document (a second, independent reader)', async () => {
    const document = await readVectors();
    for (const vector of document.vectors) {
      const result = await runScript(dir, ['-'], {
        env: { HOLDFAST_KEY: document.profileKeyHex },
        stdin: Buffer.from(vector.ciphertextHex, 'hex'),
      });
      expect({ name: vector.name, code: result.code, output: result.stdout.toString('utf8') }).toEqual({
        name: vector.name,
        code: 0,
        output: vector.plaintext,
      });
    }
  });

  it('explains zstd support according to the Node.js version it runs on', async () => {
    const { file } = await makeBackup(key, plaintext, 'ZSTD');
    await writeFile(join(dir, 'db.zst.enc'), file);
    const result = await runScript(dir, ['--key-file', 'holdfast-key.txt', '--decompress', 'zstd', 'db.zst.enc']);
    if (typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function') {
      expect(result.code).toBe(0);
      expect(firstDifference(result.stdout, plaintext)).toBe('identical');
    } else {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('zstd needs Node.js 22.15 or newer');
    }
  });
});
