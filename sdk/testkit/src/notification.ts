import { disabledGroups, registerChecks, skippedChecks, type ConformanceCheck } from './checks.js';
import { notificationChecks } from './notification/checks.js';
import { NOTIFICATION_CHECK_GROUPS, type NotificationCheckGroup, type NotificationSuiteOptions } from './notification/harness.js';

export {
  NOTIFICATION_CHECK_GROUPS,
  SAMPLE_CONTEXT,
  recordingLogger,
  type NotificationCheckGroup,
  type NotificationEndpointKind,
  type NotificationSuiteOptions,
} from './notification/harness.js';

/** The notification checks that apply, as a list (for running programmatically). */
export function notificationChannelChecks<C>(options: NotificationSuiteOptions<C>): ConformanceCheck<NotificationCheckGroup>[] {
  const disabled = options.disable ?? [];
  const unknownGroups = disabled.filter((group) => !NOTIFICATION_CHECK_GROUPS.includes(group));
  if (unknownGroups.length > 0) throw new Error(`unknown notification check groups in disable: ${unknownGroups.join(', ')}`);
  return notificationChecks(options as NotificationSuiteOptions<unknown>).filter((check) => !disabled.includes(check.group));
}

/** Registers the notification channel conformance suite with vitest, against endpoints it starts on 127.0.0.1. */
export function describeNotificationChannel<C>(name: string, options: NotificationSuiteOptions<C>): void {
  const loose = options as NotificationSuiteOptions<unknown>;
  const skipped = skippedChecks(notificationChecks(loose), disabledGroups(options.disable, options.disableReasons));
  registerChecks(`notification conformance: ${name}`, notificationChannelChecks(options), skipped);
}
