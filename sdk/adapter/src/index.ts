// `@holdfast/sdk`: everything an adapter imports, and nothing the host keeps for itself. The kernel part is the
// kernel's adapter surface (`@holdfast/kernel/adapter`); the archive names are the ones a source adapter uses to
// write and restore seekable archives. api-report.md lists every name; `npm run api-report -w @holdfast/sdk`
// rewrites it, and tooling/test/sdk-surface.test.ts fails when the two differ.
export * from '@holdfast/kernel/adapter';
export * from './define.js';
export { injectable, inject } from 'tsyringe';
export { z } from 'zod';
export * from './byte-range.js';
export * from './fs-errors.js';
export * from './remote-exec/index.js';
export * from './dump-handle.js';
export * from './change-log-spool.js';
export * from './change-log-idle.js';
export * from './channel-http.js';
export * from './oauth-tokens.js';
export * from './staged-restore.js';
export { readinessFrom } from './readiness.js';
export { chunksOf } from './streams/chunks.js';
export { resolveWebhookUrl, type SecretLookup } from './webhook-url.js';
export {
  ArchiveError,
  containedPath,
  createArchiveWriter,
  IncrementalPlan,
  openMember,
  readIndex,
  ReplaceRefusedError,
  resolveSnapshot,
  RestoreContainment,
  restoreSnapshot,
  RestoreStaging,
} from '@holdfast/archive';
export type {
  ArchiveIndex,
  ArchiveResult,
  ArchiveWriter,
  ArchiveWriterOptions,
  Compression,
  ContainedKind,
  ContainmentOptions,
  DatabaseDumpOptions,
  EntryMeta,
  ExtractSummary,
  FileIdentity,
  FileMeta,
  IndexEntry,
  RangeReader,
  ReadIndexOptions,
  ResolvedEntry,
  RestoreSnapshotOptions,
  Snapshot,
  StagingCommitOptions,
  UnchangedFile,
} from '@holdfast/archive';
