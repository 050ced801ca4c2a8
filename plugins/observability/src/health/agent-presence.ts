import type { AgentPresenceEvent, EventBus, KernelLogger } from '@holdfast/kernel';
import type { HealthChecker } from './health-check.js';

/** Presence changes arriving within this long are recorded together (one catalog query for all their sources). */
export const AGENT_PRESENCE_BATCH_MS = 500;

/**
 * Adapter health of sources bound to agents (issue 48 scope 4, docs/agents.md "Agent health"): `agent_offline` and
 * `agent_online` give every source bound to that agent a health entry at once, instead of waiting for the next
 * HEALTH_CHECK. Changes are gathered for {@link AGENT_PRESENCE_BATCH_MS}: 500 agents reconnecting together cost one
 * listing, not 500 (agents without bound sources write nothing).
 */
export class AgentPresenceHealth {
  private readonly waiting = new Map<string, { agentId: string; agentName: string; online: boolean }>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly health: HealthChecker,
    private readonly logger: KernelLogger,
    private readonly batchMs = AGENT_PRESENCE_BATCH_MS,
  ) {}

  /** Subscribes to the agents' presence events; returns the unsubscribe functions. */
  listen(events: EventBus): Array<() => void> {
    return [events.on('agent_offline', (event) => this.note(event, false)), events.on('agent_online', (event) => this.note(event, true))];
  }

  private note(event: AgentPresenceEvent, online: boolean): void {
    // The latest change of an agent wins: offline then online within one batch is checked once, as online.
    this.waiting.delete(event.agentId);
    this.waiting.set(event.agentId, { agentId: event.agentId, agentName: event.agentName, online });
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), this.batchMs);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const changes = [...this.waiting.values()];
    this.waiting.clear();
    // One batch at a time, in order: an agent's offline entry is never written after its later online one.
    this.running = this.running.then(() =>
      this.health.recordAgentPresence(changes).then(
        (outcomes) => {
          if (outcomes.length > 0) this.logger.info({ agents: changes.length, sources: outcomes.length }, 'agent presence recorded in the health of bound sources');
        },
        (error: unknown) => this.logger.warn({ err: (error as Error).message }, 'could not record agent presence in source health'),
      ),
    );
  }

  /** Records what is waiting and resolves once written (the plugin's stop). */
  async idle(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.flush();
    }
    await this.running;
  }
}
