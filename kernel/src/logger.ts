/** Minimal structured logger the kernel and adapters write to; pino satisfies it. */
export interface KernelLogger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  child?(bindings: Record<string, unknown>): KernelLogger;
}

/** A logger that drops everything; the default where none is given. */
export const silentLogger: KernelLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
