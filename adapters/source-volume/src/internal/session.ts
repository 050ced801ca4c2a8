import type { KernelLogger } from '@holdfast/sdk';
import { createHelper, removeHelper, runningUsers, startContainers, stopContainers } from './docker.js';
import type { EngineApi } from './engine-api.js';

/** What one dump or restore needs from the Engine. */
export interface SessionPlan {
  api: EngineApi;
  volume: string;
  image: string;
  readOnly: boolean;
  stopUsers: boolean;
  logger: KernelLogger;
}

/**
 * The Engine-side state of one dump or restore: the containers it stopped and its helper container. `close()`
 * removes the helper and starts the stopped containers again; it runs exactly once, on success, failure or abort,
 * and never throws (what it could not undo comes back as warnings).
 */
export class HelperSession {
  private readonly stopped: string[] = [];
  private helper: string | undefined;
  private closing: Promise<string[]> | undefined;

  private constructor(private readonly plan: SessionPlan) {}

  get helperId(): string {
    if (!this.helper) throw new Error('helper container not created');
    return this.helper;
  }

  /** Stops the volume's users (when asked) and creates the helper; on failure everything done so far is undone. */
  static async open(plan: SessionPlan): Promise<HelperSession> {
    const session = new HelperSession(plan);
    try {
      if (plan.stopUsers) {
        const users = await runningUsers(plan.api, plan.volume);
        plan.logger.info({ volume: plan.volume, containers: users.map((id) => id.slice(0, 12)) }, 'stopping containers that use the volume');
        await stopContainers(plan.api, users, session.stopped);
      }
      session.helper = await createHelper(plan.api, plan.image, plan.volume, plan.readOnly, plan.logger);
      return session;
    } catch (error) {
      await session.close();
      throw error;
    }
  }

  close(): Promise<string[]> {
    this.closing ??= this.undo();
    return this.closing;
  }

  private async undo(): Promise<string[]> {
    const warnings: string[] = [];
    if (this.helper) {
      try {
        await removeHelper(this.plan.api, this.helper);
      } catch (error) {
        warnings.push(`helper container ${this.helper.slice(0, 12)} could not be removed: ${(error as Error).message}`);
      }
    }
    // The restart is the point of the guarantee: it runs whatever happened before, each container on its own.
    const failures = await startContainers(this.plan.api, this.stopped);
    for (const failure of failures) warnings.push(`container ${failure} could not be started again`);
    if (warnings.length > 0) this.plan.logger.warn({ warnings }, 'volume session cleanup incomplete');
    return warnings;
  }
}
