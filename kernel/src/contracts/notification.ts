/** One name/value row shown by channels that support fields (embeds, cards, email tables). */
export interface NotificationField {
  name: string;
  value: string;
  inline?: boolean;
}

/** Adapter-independent context of one notification (SPEC "Channel contract"). */
export interface NotificationContext {
  success?: boolean;
  eventType?: string;
  title?: string;
  fields?: NotificationField[];
  /** Hex colour such as `#00ff00`. */
  color?: string;
}

/** Result of a channel test. */
export interface ChannelTestResult {
  success: boolean;
  message: string;
}

/** What a notification channel declares it can do. */
export interface NotificationCapabilities {
  /** Renders `fields` as structured rows. */
  fields: boolean;
  /** Can address a user by email (system events with `notifyUser`). */
  emailRecipient: boolean;
}

/**
 * A notification channel. `send` resolves `true`/`false` and never throws or rejects; `test` resolves
 * `{ success, message }` and never throws. The kernel bounds them (30 s send, 10 s test).
 */
export interface NotificationChannel {
  send(message: string, context?: NotificationContext): Promise<boolean>;
  test(): Promise<ChannelTestResult>;
  dispose?(): Promise<void>;
}
