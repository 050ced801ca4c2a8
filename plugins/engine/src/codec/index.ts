export { createEncryptStream, EncryptStream, type EncryptStreamOptions } from './encryption/encrypt-stream.js';
export { createDecryptStream, DecryptStream, type DecryptStreamOptions } from './encryption/decrypt-stream.js';
export { DecryptError, isDecryptError, type DecryptErrorCode } from './encryption/errors.js';
export {
  DEFAULT_CHUNK_SIZE,
  ENCRYPTION_FORMAT_VERSION,
  ENCRYPTION_MAGIC,
  KEY_LENGTH,
  MAX_CHUNK_SIZE,
  MIN_CHUNK_SIZE,
  keyFingerprint,
  parseProfileKey,
  type EncryptionHeader,
  type EncryptionSidecarInfo,
} from './encryption/format.js';
export {
  CODEC_EXTENSIONS,
  CODEC_LEVELS,
  COMPRESSION_CODECS,
  compressionSidecarInfo,
  defaultZstdThreads,
  parseCompressionCodec,
  resolveCompressionLevel,
  resolveCompressionThreads,
  ZSTD_FRAME_BYTES,
  ZSTD_THREADS,
  type CodecLevels,
  type CompressionOptions,
  type CompressionCodec,
  type CompressionSidecarInfo,
} from './compression/codecs.js';
export { createCompressStream, createDecompressStream, isCodecAvailable } from './compression/streams.js';
export { buildRecoveryKit, RECOVERY_KIT_FILES, type RecoveryKitFile, type RecoveryKitOptions } from './recovery-kit.js';
export {
  AgeDecryptStream,
  AgeEncryptStream,
  createAgeDecryptStream,
  createAgeEncryptStream,
  isAgeEncryption,
  type AgeSidecarInfo,
} from './age/index.js';
