export * from '@holdfast/kernel';
export * from './define.js';
export * from './secrets.js';
export { injectable, inject } from 'tsyringe';
export { z } from 'zod';
export * from './byte-range.js';
export * from './fs-errors.js';
export * from './remote-exec/index.js';
export * from './dump-handle.js';
