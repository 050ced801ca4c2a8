export * from './definition.js';
export * from './storage.js';
export * from './notification.js';
export * from './source.js';
export * from './retention.js';
export * from './naming.js';
export * from './checks.js';
export * from './helpers/index.js';
