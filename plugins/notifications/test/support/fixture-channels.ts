// TEST-ONLY notification channel `notification-hanging`: its send never settles, standing in for a service that
// accepts the connection and never answers, so the kernel's send bound decides. Real deliveries in these suites
// go through the real generic-webhook and email adapters.
import { defineNotificationAdapter, injectable, z, type ChannelTestResult, type NotificationChannel } from '@holdfast/sdk';

@injectable()
class HangingChannel implements NotificationChannel {
  send(): Promise<boolean> {
    return new Promise<boolean>(() => undefined);
  }
  async test(): Promise<ChannelTestResult> {
    return { success: false, message: 'never answers' };
  }
}

export const hangingChannel = defineNotificationAdapter({
  id: 'hanging',
  displayName: 'Hanging channel (test only)',
  configSchema: z.object({}),
  capabilities: { fields: false, emailRecipient: false },
  implementation: HangingChannel,
});
