// Backup codecs for now; the queue and the runner join this entry point later.
export * from './codec/index.js';
