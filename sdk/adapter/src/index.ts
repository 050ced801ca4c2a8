export * from '@holdfast/kernel';
export * from './define.js';
export * from './secrets.js';
export { injectable, inject } from 'tsyringe';
export { z } from 'zod';
