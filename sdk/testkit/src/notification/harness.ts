import { createAdapterInstance } from '../helpers/instantiate.js';
import assert from 'node:assert/strict';
import {
  type AdapterContext,
  type ChannelTestResult,
  type KernelLogger,
  type NotificationChannel,
  type NotificationContext,
} from '@holdfast/sdk';

/** The check groups of the notification suite; pass names to `disable` to switch groups off. */
export const NOTIFICATION_CHECK_GROUPS = ['delivery', 'failures', 'timeouts', 'config validation', 'redirects'] as const;

/** One of {@link NOTIFICATION_CHECK_GROUPS}. */
export type NotificationCheckGroup = (typeof NOTIFICATION_CHECK_GROUPS)[number];

/**
 * The local endpoints the suite starts on 127.0.0.1: `receiver` answers 200 and records requests, `failing` answers
 * 401, `hanging` accepts connections and never answers, `unreachable` is a closed port.
 */
export type NotificationEndpointKind = 'receiver' | 'failing' | 'hanging' | 'unreachable';

/** Options of `describeNotificationChannel`. */
export interface NotificationSuiteOptions<C = unknown> {
  /** The adapter's default export. */
  definition: unknown;
  /**
   * A valid config that sends to `baseUrl` (e.g. `http://127.0.0.1:40123`, no trailing slash). Put the secret values
   * listed in `secrets` into it (tokens, auth headers, URL path tokens).
   */
  configFor(baseUrl: string, kind: NotificationEndpointKind): C | Promise<C>;
  /** A config the schema must reject; include secret values so the check can prove the error hides them. */
  invalidConfig: unknown;
  /** Secret values placed in the configs; no result message, log entry or config error may contain one. */
  secrets: string[];
  /** Bound handed to the kernel's `sendBounded`/`testBounded` in the hanging check (default 2 000 ms). */
  boundMs?: number;
  /**
   * How long the adapter's own promises may take against a hanging host before the check fails. Defaults to the
   * kernel limits (30 s send, 10 s test); an adapter with a configurable timeout passes a small one in `configFor`.
   */
  ownTimeoutMs?: { send: number; test: number };
  /** Groups to switch off. */
  disable?: NotificationCheckGroup[];
  /** Why each switched-off group does not apply; shown in the skipped tests' names. */
  disableReasons?: Partial<Record<NotificationCheckGroup, string>>;
  /** Extra adapter context (credentials); the suite supplies its own recording logger. */
  context?: Partial<AdapterContext>;
}

/** A logger that keeps every entry as text, so the suite can search it for secrets. */
export function recordingLogger(entries: string[]): KernelLogger {
  const record = (level: string) => (obj: object | string, msg?: string) => {
    entries.push(`${level} ${JSON.stringify(obj, (_key, value: unknown) => (value instanceof Error ? { message: value.message, cause: String(value.cause) } : value))} ${msg ?? ''}`);
  };
  const logger: KernelLogger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error'), child: () => logger };
  return logger;
}

/** A channel built from a config, with what it logged. */
export interface ChannelUnderTest {
  channel: NotificationChannel;
  logs: string[];
}

/** Instantiates the channel with a recording logger. */
export function buildChannel(options: NotificationSuiteOptions<unknown>, config: unknown): ChannelUnderTest {
  const logs: string[] = [];
  const channel = createAdapterInstance(options.definition, config, {
    ...options.context,
    logger: recordingLogger(logs),
  }) as NotificationChannel;
  return { channel, logs };
}

/** A realistic context, exercising every field channels render. */
export const SAMPLE_CONTEXT: NotificationContext = {
  success: false,
  eventType: 'backup_failure',
  title: 'Backup "nightly" failed',
  color: '#ff0000',
  fields: [
    { name: 'Job', value: 'nightly', inline: true },
    { name: 'Error', value: 'disk full: "/var/backups"\nsee logs' },
  ],
};

/** Calls `send` and fails the check when it throws or rejects instead of resolving a boolean. */
export async function sendSafely(channel: NotificationChannel, message: string, context?: NotificationContext): Promise<boolean> {
  let result: unknown;
  try {
    result = await channel.send(message, context);
  } catch (error) {
    assert.fail(`send() must never throw or reject; it threw: ${(error as Error)?.message ?? String(error)}`);
  }
  assert.equal(typeof result, 'boolean', `send() must resolve a boolean, got ${JSON.stringify(result)}`);
  return result as boolean;
}

/** Calls `test` and fails the check when it throws or resolves something other than `{ success, message }`. */
export async function testSafely(channel: NotificationChannel): Promise<ChannelTestResult> {
  let result: ChannelTestResult;
  try {
    result = await channel.test();
  } catch (error) {
    assert.fail(`test() must never throw or reject; it threw: ${(error as Error)?.message ?? String(error)}`);
  }
  assert.equal(typeof result?.success, 'boolean', 'test() must resolve { success: boolean, message: string }');
  assert.equal(typeof result.message, 'string', 'test() must resolve { success: boolean, message: string }');
  return result;
}

/** Fails when any text contains one of the secrets; `where` names the texts. */
export function assertNoSecrets(secrets: readonly string[], texts: readonly string[], where: string): void {
  for (const secret of secrets) {
    const leak = texts.find((text) => text.includes(secret));
    assert.equal(leak, undefined, `${where} contains the secret value "${secret.slice(0, 3)}…": ${leak?.slice(0, 200)}`);
  }
}

/** Collects unhandled rejections while armed; `stop()` waits a little for late ones and returns them. */
export function trackUnhandledRejections(): { stop(): Promise<unknown[]> } {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  process.on('unhandledRejection', listener);
  return {
    async stop() {
      await new Promise((resolve) => setTimeout(resolve, 100));
      process.off('unhandledRejection', listener);
      return seen;
    },
  };
}

/** Resolves `{ settled: true, value }` when `work` settles within `ms`, else `{ settled: false }`. */
export async function settlesWithin<T>(work: Promise<T>, ms: number): Promise<{ settled: true; value: T } | { settled: false }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ settled: false }>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), ms);
  });
  try {
    return await Promise.race([work.then((value) => ({ settled: true as const, value })), late]);
  } finally {
    clearTimeout(timer);
  }
}
