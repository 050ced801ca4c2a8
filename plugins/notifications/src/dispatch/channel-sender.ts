import {
  instantiateAdapter,
  NOTIFICATION_SEND_TIMEOUT_MS,
  sendBounded,
  type AdapterRegistry,
  type KernelLogger,
  type NotificationChannel,
  type NotificationContext,
  type NotificationField,
  type ResolvedAdapterConfig,
} from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import type { NotificationLogWriter } from '../log/notification-log.js';

/** The adapter-independent payload of SPEC "Dispatch rules" 3. */
export interface NotificationPayload {
  title: string;
  message: string;
  fields?: NotificationField[];
  color?: string;
  success?: boolean;
}

/** What one delivery attempt came to. */
export interface DeliveryResult {
  channelId: string;
  channelName: string;
  adapterId: string;
  success: boolean;
  error?: string;
}

/** Extra facts of one attempt. */
export interface DeliveryOptions {
  executionId?: string | null;
  /** Replaces the channel's `to` (email-kind channels, `notifyUser`). */
  recipient?: string;
}

/** A logger that forwards to `base` and keeps the reason of the last warning or error the channel logged. */
function capturingLogger(base: KernelLogger): { logger: KernelLogger; reason(): string | undefined } {
  let last: string | undefined;
  const keep = (level: 'warn' | 'error') => (obj: object | string, msg?: string) => {
    const reason = typeof obj === 'string' ? obj : (obj as { reason?: unknown }).reason;
    last = typeof reason === 'string' ? reason : (msg ?? last);
    base[level](obj as object, msg);
  };
  const logger: KernelLogger = { ...base, warn: keep('warn'), error: keep('error'), child: () => logger };
  return { logger, reason: () => last };
}

/**
 * Sends one payload to one configured channel: instantiates the adapter, bounds the send (SPEC: 30 s; a timeout
 * counts as failure), disposes the instance and records a log row. Never throws, and a failing log write only logs.
 */
export class ChannelSender {
  constructor(
    private readonly options: {
      container: DependencyContainer;
      registry: () => AdapterRegistry;
      log: NotificationLogWriter;
      logger: KernelLogger;
      sendTimeoutMs?: number;
    },
  ) {}

  async send(channel: ResolvedAdapterConfig, eventType: string, payload: NotificationPayload, delivery: DeliveryOptions = {}): Promise<DeliveryResult> {
    const bound = this.options.sendTimeoutMs ?? NOTIFICATION_SEND_TIMEOUT_MS;
    const context: NotificationContext = { eventType, title: payload.title, fields: payload.fields ?? [], color: payload.color, success: payload.success };
    const captured = capturingLogger(this.options.logger.child?.({ channel: channel.name }) ?? this.options.logger);
    let success = false;
    let error: string | undefined;
    let instance: NotificationChannel | undefined;
    try {
      const definition = this.options.registry().require('notification', channel.adapterId).definition;
      const config = delivery.recipient === undefined ? channel.config : { ...channel.config, to: delivery.recipient };
      instance = instantiateAdapter(this.options.container, definition, config, {
        instanceId: channel.configId,
        instanceName: channel.name,
        logger: captured.logger,
        credentials: channel.credentials,
      }) as NotificationChannel;
      const started = Date.now();
      success = await sendBounded(instance, payload.message, context, bound);
      if (!success) {
        const timedOut = Date.now() - started >= bound - 5;
        error = timedOut ? `no answer within ${Math.round(bound / 100) / 10} s` : (captured.reason() ?? 'the channel reported a failure');
      }
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    } finally {
      await Promise.resolve(instance?.dispose?.()).catch(() => undefined);
    }
    const result: DeliveryResult = { channelId: channel.configId, channelName: channel.name, adapterId: channel.adapterId, success, ...(error ? { error } : {}) };
    await this.record(result, eventType, payload, context, delivery);
    return result;
  }

  private async record(result: DeliveryResult, eventType: string, payload: NotificationPayload, context: NotificationContext, delivery: DeliveryOptions): Promise<void> {
    try {
      const rendered = { message: payload.message, ...context, ...(delivery.recipient ? { recipient: delivery.recipient } : {}) };
      await this.options.log.write({
        eventType,
        channelId: result.channelId,
        channelName: result.channelName,
        adapterId: result.adapterId,
        status: result.success ? 'Success' : 'Failed',
        title: payload.title,
        message: payload.message,
        fields: payload.fields ?? [],
        color: payload.color ?? null,
        renderedPayload: JSON.stringify(rendered),
        error: result.error ?? null,
        executionId: delivery.executionId ?? null,
      });
    } catch (failure) {
      // SPEC rule 6: failing to write the log never blocks (or undoes) delivery.
      this.options.logger.error({ err: failure, channel: result.channelName, eventType }, 'could not write the notification log');
    }
  }
}
