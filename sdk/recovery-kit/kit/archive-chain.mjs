// Incremental chains for the recovery kit: finds the base archives of an archive next to it, checks that they form
// its chain, and resolves which archive holds the bytes of each entry of the snapshot.
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { openArchiveFile, readArchiveIndex } from './archive-reader.mjs';
import { EXIT, KitError } from './hfenc.mjs';

const damaged = (message) => new KitError(EXIT.damaged, message);

/** An open archive and its verified index. */
async function loadArchive(path, getKey) {
  const file = await openArchiveFile(path, getKey);
  try {
    const { index, source } = await readArchiveIndex(file, getKey);
    return { path, file, index, source };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * A base archive is named by its storage key ("site/site_2026-11-01.hfa.enc"); the user downloads the chain into
 * one folder, so it is looked up by the key's last path segment next to the archive being restored.
 */
function localPathOf(key, folder) {
  const name = key.slice(key.lastIndexOf('/') + 1);
  if (name === '' || name === '.' || name === '..') throw damaged(`the chain names an unusable base archive "${key}"`);
  return join(folder, name);
}

/**
 * Opens `archivePath` and, when it is part of an incremental chain, every earlier archive of that chain. Checks
 * that they are one chain (same id, sequences 0..n, each built on the archives before it) and that every missing
 * file is named at once, so the user can fetch them all in one go.
 */
export async function loadChain(archivePath, getKey) {
  const newest = await loadArchive(archivePath, getKey);
  const archives = [newest];
  try {
    const chain = newest.index.chain;
    const baseKeys = chain?.baseArchives ?? [];
    if (chain && baseKeys.length !== chain.sequence) throw damaged(`${archivePath}: sequence ${chain.sequence} needs ${chain.sequence} base archives, the index names ${baseKeys.length}`);
    const folder = dirname(archivePath);
    const missing = baseKeys.filter((key) => !existsSync(localPathOf(key, folder)));
    if (missing.length > 0) {
      const files = missing.map((key) => `${basename(localPathOf(key, folder))} (base archive "${key}")`).join(', ');
      throw new KitError(
        EXIT.io,
        `${archivePath} is sequence ${chain.sequence} of incremental chain ${chain.id} and needs its earlier archives next to it; ` +
          `missing in ${resolve(folder)}: ${files}. Download every archive of the chain into one folder.`,
      );
    }
    for (const [sequence, key] of baseKeys.entries()) {
      const base = await loadArchive(localPathOf(key, folder), getKey);
      archives.push(base);
      checkChainLink(base, { key, sequence, chain });
    }
    return { newest, byName: archivesByName(newest, baseKeys, archives.slice(1)), archives };
  } catch (error) {
    await closeAll(archives);
    throw error;
  }
}

// What the newest index says this base archive must be.
function checkChainLink(base, { key, sequence, chain }) {
  const { index, path } = base;
  if (index.chain?.id !== chain.id) throw damaged(`${path} does not belong to chain ${chain.id} (it is ${index.chain ? `in chain ${index.chain.id}` : 'not chained'})`);
  if (index.chain.sequence !== sequence) throw damaged(`${path} is sequence ${index.chain.sequence} of chain ${chain.id}, expected ${sequence}`);
  const expectedBases = chain.baseArchives.slice(0, sequence);
  if (index.chain.baseArchives.join('\n') !== expectedBases.join('\n')) {
    throw damaged(`${path} was built on [${index.chain.baseArchives.join(', ')}], expected [${expectedBases.join(', ')}]`);
  }
  if (index.archiveName !== undefined && index.archiveName !== key) {
    throw damaged(`${path} holds archive "${index.archiveName}", but the chain expects "${key}" there`);
  }
}

function archivesByName(newest, baseKeys, bases) {
  const byName = new Map(baseKeys.map((key, position) => [key, bases[position]]));
  if (newest.index.archiveName !== undefined) byName.set(newest.index.archiveName, newest);
  return byName;
}

/**
 * Every entry of the newest snapshot with the archive that holds its bytes and that archive's own entry for them
 * (matched by offset, kind and SHA-256, as the format requires of a reference).
 */
export function resolveEntries({ newest, byName }) {
  const storedAt = new Map();
  const storedEntriesOf = (archive) => {
    if (!storedAt.has(archive)) {
      storedAt.set(archive, new Map(archive.index.entries.filter((entry) => entry.archive === undefined).map((entry) => [entry.offset, entry])));
    }
    return storedAt.get(archive);
  };
  return newest.index.entries.map((entry) => {
    const holder = entry.archive === undefined ? newest : byName.get(entry.archive);
    if (!holder) throw damaged(`"${entry.path}" lives in "${entry.archive}", which is not an archive of this chain`);
    const storedEntry = storedEntriesOf(holder).get(entry.offset);
    if (!storedEntry || storedEntry.kind !== entry.kind || storedEntry.sha256 !== entry.sha256) {
      throw damaged(`"${entry.path}" references byte ${entry.offset} of ${holder.path}, which holds no such member`);
    }
    return { entry, holder, storedEntry };
  });
}

/** Closes every archive file, ignoring close errors (the files were only read). */
export async function closeAll(archives) {
  await Promise.all(archives.map((archive) => archive.file.close().catch(() => undefined)));
}
