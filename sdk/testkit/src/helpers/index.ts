export * from './random-stream.js';
export * from './hashing.js';
export * from './temp-dir.js';
export * from './rss.js';
export * from './processes.js';
export * from './http-endpoints.js';
export * from './instantiate.js';
