import { pino, type Logger } from 'pino';
import type { LogLevel } from './runtime-config.js';

/** The process logger: JSON lines on stdout, written synchronously so nothing is lost on exit. */
export function createLogger(level: LogLevel): Logger {
  return pino({ level, base: { service: 'holdfast' } });
}
