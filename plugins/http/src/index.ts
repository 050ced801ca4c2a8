export { createHttpPlugin } from './plugin.js';
export { healthSchema, HEALTH_DATABASE_TIMEOUT_MS } from './health.js';
