import { ValidationError, type AdapterRegistry } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/core';
import { AdapterConfigEntity } from '../entities/adapter-config.js';
import { EncryptionProfileEntity } from '../entities/profiles.js';

/** `PLAIN`: the source's own format (a tar, a dump). `SEEKABLE`: a Holdfast seekable archive (docs/formats/archive.md). */
export const ARCHIVE_FORMATS = ['PLAIN', 'SEEKABLE'] as const;
export const FULL_EVERY_RUNS = { min: 2, max: 1000 } as const;
export const FULL_EVERY_DAYS = { min: 1, max: 3650 } as const;

/** The archive fields of a job after an update is applied to the stored row. */
export interface ArchiveFields {
  archiveFormat: string;
  fullEveryRuns: number | null;
  fullEveryDays: number | null;
  compression: string;
  sourceId: string;
  encryptionProfileId?: string | null;
}

/**
 * A seekable archive needs a source that writes one and a codec the format has (per-member gzip or zstd, or none);
 * incremental chains need a seekable archive and a source that walks files. Each refusal is a 400 naming the field.
 */
export async function checkArchiveOptions(em: EntityManager, registry: AdapterRegistry, fields: ArchiveFields): Promise<void> {
  const isChained = fields.fullEveryRuns !== null || fields.fullEveryDays !== null;
  if (fields.archiveFormat !== 'SEEKABLE') {
    if (isChained) throw invalid(fields.fullEveryRuns !== null ? 'body.fullEveryRuns' : 'body.fullEveryDays', 'incremental chains need archiveFormat SEEKABLE');
    return;
  }
  if (fields.compression === 'BROTLI') throw invalid('body.compression', 'a SEEKABLE archive compresses each member with GZIP or ZSTD (or NONE), not BROTLI');
  // Browsing and incremental chains read the archive's index, which a server holding only a public key cannot open.
  const profile = fields.encryptionProfileId ? await em.findOne(EncryptionProfileEntity, { id: fields.encryptionProfileId }) : null;
  if (profile?.publicKey) {
    throw invalid('body.encryptionProfileId', `"${profile.name}" is a public-key profile; a SEEKABLE archive cannot use one yet (choose archiveFormat PLAIN or a symmetric profile)`);
  }
  const source = await em.findOne(AdapterConfigEntity, { id: fields.sourceId });
  // A missing source is reported by the reference check with its own 404.
  if (!source) return;
  const capabilities = registry.get('source', source.adapterId)?.definition.capabilities as { seekableArchive?: boolean; fileArchive?: boolean } | undefined;
  if (!capabilities?.seekableArchive) throw invalid('body.archiveFormat', `source "${source.name}" (${source.adapterId}) cannot write a SEEKABLE archive`);
  if (isChained && !capabilities.fileArchive) {
    throw invalid(fields.fullEveryRuns !== null ? 'body.fullEveryRuns' : 'body.fullEveryDays', `incremental chains are for file sources; "${source.name}" is a database`);
  }
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}
