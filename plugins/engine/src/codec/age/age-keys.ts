// The key strings are parsed in the kernel (the catalog validates recipients with the same code).
export { AgeKeyError, formatAgeRecipient, generateAgeIdentity, parseAgeIdentity, parseAgeRecipient, publicKeyObject, rawPublicKey, type AgeIdentity, type AgeRecipient } from '@holdfast/kernel';
