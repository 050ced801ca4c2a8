import { pgClient, type OrmDatabase, type PgClient, type PgSession } from '@holdfast/orm-port';
import type { KernelLogger } from '@holdfast/kernel';

/** PostgreSQL channel on which a process announces "the queue changed" (a run was queued or a slot came free). */
export const QUEUE_CHANNEL = 'holdfast_queue';

/**
 * Wakes the queue of every process when any process queues a run or frees a slot, so a run queued through an `api`
 * process, or a slot freed on another worker, is claimed at once instead of on the next poll. PostgreSQL only
 * (`LISTEN`/`NOTIFY` on one pool connection held for the purpose); libsql is one process and needs none. The poll
 * stays as the fallback: a lost notification or a dropped listening connection only delays a claim until it.
 */
export class QueueWakeups {
  private connection: PgSession | undefined;
  private connecting: Promise<void> | undefined;
  private isStopped = false;

  constructor(
    private readonly database: OrmDatabase,
    private readonly onWake: () => void,
    private readonly logger: KernelLogger,
  ) {}

  private client(): PgClient {
    return pgClient(this.database);
  }

  /** Starts listening; a failure is logged and retried by {@link ensure} (called on each poll). */
  ensure(): Promise<void> {
    if (this.connection || this.isStopped) return Promise.resolve();
    this.connecting ??= this.listen().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async listen(): Promise<void> {
    let connection: PgSession | undefined;
    try {
      connection = await this.client().acquireConnection();
      const listening = connection;
      listening.on('notification', (message) => {
        if (message.channel === QUEUE_CHANNEL) this.onWake();
      });
      const drop = () => void this.drop(listening);
      listening.on('error', drop);
      listening.on('end', drop);
      await listening.query(`LISTEN ${QUEUE_CHANNEL}`);
      if (this.isStopped) {
        await this.drop(listening);
        return;
      }
      this.connection = listening;
    } catch (error) {
      this.logger.warn({ err: error }, 'queue: could not listen for queue changes; claiming on the poll interval only');
      if (connection) await this.drop(connection);
    }
  }

  private async drop(connection: PgSession): Promise<void> {
    if (this.connection === connection) this.connection = undefined;
    connection.removeAllListeners('notification');
    await connection.query(`UNLISTEN ${QUEUE_CHANNEL}`).catch(() => undefined);
    await this.client().releaseConnection(connection).catch(() => undefined);
  }

  /** Tells every listening process to look at the queue; a failure only delays them until their poll. */
  async announce(): Promise<void> {
    await this.database.em().getKnex().raw(`NOTIFY ${QUEUE_CHANNEL}`).catch((error: unknown) => this.logger.debug({ err: error }, 'queue: NOTIFY failed'));
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    await this.connecting;
    if (this.connection) await this.drop(this.connection);
  }
}
