export { AgeEncryptStream, createAgeEncryptStream, type AgeSidecarInfo } from './age-encrypt-stream.js';
export { AgeDecryptStream, createAgeDecryptStream } from './age-decrypt-stream.js';
export { findAgeHeaderEnd, openAgeHeader, AGE_MAX_HEADER_LENGTH, AGE_VERSION_LINE } from './age-format.js';
export { AgeKeyError, formatAgeRecipient, generateAgeIdentity, parseAgeIdentity, parseAgeRecipient, type AgeIdentity, type AgeRecipient } from './age-keys.js';
export { assertAgeKeyOpens, isAgeEncryption, parsePrivateKeyField, privateKeyRequired } from './age-key-check.js';
