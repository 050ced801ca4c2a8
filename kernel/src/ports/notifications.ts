/** Ports the notifications plugin implements, registered under the matching TOKENS. */

/** Delivery figures of the notification log (notifications plugin; observability's Prometheus metrics). */
export interface DeliveryStats {
  /** Failed deliveries still in the log (kept for `notification.logRetentionDays`), by event type. */
  failuresByEvent(): Promise<Array<{ event: string; count: number }>>;
}
