// `holdfast-decrypt.mjs extract`: restores the snapshot of a Holdfast seekable archive (and of the earlier archives
// of its incremental chain) into a new folder, or one file or folder of it with --only.
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { closeAll, loadChain, resolveEntries } from './archive-chain.mjs';
import { storedContent } from './archive-reader.mjs';
import { EXIT, KitError, readKey } from './hfenc.mjs';
import { RestoreTarget, safeSegments } from './restore-target.mjs';

const damaged = (message) => new KitError(EXIT.damaged, message);
const hasNativeZstd = () => typeof zlib.createZstdDecompress === 'function';

/**
 * Restores `archive` into the new folder `out`; `only` limits it to one file or folder. Returns what was restored and
 * the warnings: members the containment rule refused, and members restored without setuid/setgid/sticky bits.
 */
export async function extractArchive({ archive, out, keyFile, only, keepSpecialModes = false }) {
  const getKey = keyGetter(keyFile);
  const finalPath = resolve(out);
  const staging = checkOutputFolder(finalPath);
  const loaded = await loadChain(archive, getKey);
  let isStagingCreated = false;
  try {
    for (const { path, source } of loaded.archives) note(`${basename(path)}: index read from ${source}`);
    const entries = withSafePaths(resolveEntries(loaded));
    const selected = selectEntries(entries, only);
    if (selected.some(({ storedEntry }) => storedEntry.compression === 'zstd')) ensureZstdDecoder();
    await mkdir(dirname(staging), { recursive: true });
    await mkdir(staging);
    isStagingCreated = true;
    const { counts, warnings } = await restoreInto(staging, selected, entries, keepSpecialModes);
    await moveIntoPlace(staging, finalPath);
    return { counts, warnings, archives: loaded.archives.length, dumps: selected.filter(({ entry }) => entry.kind === 'database-dump') };
  } catch (error) {
    // A half-restored folder looks plausible and is not: it never takes the output's name, and is removed.
    if (isStagingCreated) await rm(staging, { recursive: true, force: true }).catch(() => note(`could not remove ${staging}; do not use it`));
    throw error;
  } finally {
    await closeAll(loaded.archives);
  }
}

function note(message) {
  process.stderr.write(`holdfast-decrypt: ${message}\n`);
}

// A key file given on the command line is read at once (a typo fails early); otherwise the key is only asked for
// when an encrypted file turns up, so plain archives need none.
function keyGetter(keyFile) {
  let key = keyFile ? readKey(keyFile) : undefined;
  return (path) => {
    if (!key && !process.env.HOLDFAST_KEY) {
      throw new KitError(EXIT.usage, `${path} is encrypted: pass --key-file <path> (holdfast-key.txt of this kit) or set HOLDFAST_KEY`);
    }
    key ??= readKey(undefined);
    return key;
  };
}

// The restore is built in <out>.partial and renamed at the end, so the output folder must be new or empty.
function checkOutputFolder(out) {
  const existing = lstatSync(out, { throwIfNoEntry: false });
  if (existing && (!existing.isDirectory() || readdirSync(out).length > 0)) {
    throw new KitError(EXIT.io, `${out} exists and is not an empty folder; restore into a new folder`);
  }
  const staging = `${out}.partial`;
  if (lstatSync(staging, { throwIfNoEntry: false })) {
    throw new KitError(EXIT.io, `${staging} exists (left by an interrupted run?); remove it or restore into another folder`);
  }
  return staging;
}

async function moveIntoPlace(staging, out) {
  if (lstatSync(out, { throwIfNoEntry: false })) await rmdir(out);
  await rename(staging, out);
}

// Checked for every entry, selected or not: an index holding an escaping path is not to be trusted at all.
function withSafePaths(resolved) {
  return resolved.map((item) => ({ ...item, safePath: safeSegments(item.entry.path).join('/') }));
}

/** Every entry when `only` is not given, else the entry at that path and everything under it. */
function selectEntries(entries, only) {
  if (only === undefined) return entries;
  const segments = only.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0 || segments.includes('..')) throw new KitError(EXIT.usage, `--only needs a path inside the archive, like var/www/index.html, not "${only}"`);
  const wanted = segments.join('/');
  const selected = entries.filter(({ safePath }) => safePath === wanted || safePath.startsWith(`${wanted}/`));
  if (selected.length === 0) throw new KitError(EXIT.usage, `nothing at "${wanted}" in this snapshot (paths are relative to the backed-up folder)`);
  return selected;
}

async function restoreInto(root, selected, entries, keepSpecialModes) {
  const target = new RestoreTarget(root, { keepSpecialModes });
  const byPath = new Map(entries.map((item) => [item.safePath, item]));
  const selectedPaths = new Set(selected.map(({ safePath }) => safePath));
  for (const item of selected) {
    const { entry } = item;
    if (entry.kind === 'directory') await target.directory(entry);
    else if (entry.kind === 'symlink') target.symlink(entry);
    else if (entry.kind === 'hardlink') await restoreHardLink(target, item, byPath, selectedPaths);
    else await restoreContent(target, entry, item);
  }
  const counts = await target.finish();
  return { counts, warnings: target.warnings };
}

// A hard link whose target is not being restored (--only picked the link alone) comes back as a copy of it.
async function restoreHardLink(target, { entry }, byPath, selectedPaths) {
  const targetPath = safeSegments(entry.target).join('/');
  const linked = byPath.get(targetPath);
  if (linked?.entry.kind !== 'file') throw damaged(`hard link "${entry.path}" points at "${entry.target}", which is not a file of this snapshot`);
  if (selectedPaths.has(targetPath)) return target.hardlink(entry);
  return restoreContent(target, { ...entry, kind: 'file', size: linked.entry.size, sha256: linked.entry.sha256 }, linked);
}

function restoreContent(target, entry, { holder, storedEntry }) {
  return target.file(entry, (check, sink) => decode(storedContent(holder.file, storedEntry), storedEntry.compression, check, sink, entry.path));
}

/** Streams stored bytes through the member's decoder and the content check into the output file. */
async function decode(frames, compression, check, sink, path) {
  const source = Readable.from(frames);
  if (compression === 'zstd' && !hasNativeZstd()) return decodeWithZstdProgram(source, check, sink, path);
  const stages = [source];
  if (compression !== 'none') {
    const decoder = compression === 'gzip' ? zlib.createGunzip() : zlib.createZstdDecompress();
    decoder.on('error', (error) => (error.isDecompression = true));
    stages.push(decoder);
  }
  try {
    await pipeline([...stages, check, sink]);
  } catch (error) {
    throw explain(error, compression, path);
  }
}

// Node.js before 22.15 has no zstd; the zstd program decodes concatenated frames the same way.
async function decodeWithZstdProgram(source, check, sink, path) {
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (data) => (stderr = `${stderr}${data}`.slice(-2000)));
  const exited = new Promise((resolveExit, rejectExit) => {
    child.on('error', rejectExit);
    child.on('close', (code, signal) => {
      if (code === 0) resolveExit();
      else rejectExit(Object.assign(new Error(`zstd exited with ${code ?? signal}: ${stderr.trim()}`), { isDecompression: true }));
    });
  });
  try {
    await Promise.all([pipeline(source, child.stdin), pipeline(child.stdout, check, sink), exited]);
  } catch (error) {
    child.kill();
    // A broken pipe only says zstd stopped reading; its exit status says why.
    const exitError = await exited.then(() => undefined, (failure) => failure);
    const isPipeError = ['EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED'].includes(error.code);
    throw explain(isPipeError && exitError ? exitError : error, 'zstd', path);
  }
}

// The codec comes from the index, not from the user, so data that does not decompress means a damaged archive.
function explain(error, compression, path) {
  if (error instanceof KitError) return error;
  if (error.isDecompression) return damaged(`"${path}": the ${compression} data does not decompress (${error.message})`);
  return new KitError(EXIT.io, `cannot write "${path}": ${error.code ?? 'I/O error'}: ${error.message}`);
}

function ensureZstdDecoder() {
  if (hasNativeZstd()) return;
  const probe = spawnSync('zstd', ['--version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    throw new KitError(
      EXIT.decompress,
      'this archive holds zstd-compressed data, and neither this Node.js (zstd is built in from 22.15) nor the zstd program ' +
        'is available: install zstd (apt install zstd, brew install zstd) or run the script with a newer Node.js',
    );
  }
}
