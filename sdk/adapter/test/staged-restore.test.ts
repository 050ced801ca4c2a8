import { describe, expect, it } from 'vitest';
import { AdapterError, StagedDatabaseRestore, type StagedTarget } from '../src/index.js';

/** Records the order of staging, swap and discard; `failCommit` makes the swap fail as an engine's would. */
class Recorder extends StagedDatabaseRestore {
  readonly events: string[] = [];
  constructor(
    private readonly failCommit = false,
    overwrite?: boolean,
  ) {
    super({ kind: 'source', id: 'demo' }, overwrite);
  }

  /** What an engine's swap does when it finds targets that exist now. */
  existingNow(names: string[]): void {
    this.refuseReplacing(names);
  }

  stage(target: string): string {
    this.refuseSecondInto(target);
    const staging = `${target}__staging_${this.id}`;
    this.staged.push({ target, staging });
    this.events.push(`stage ${target}`);
    return staging;
  }

  get entries(): readonly StagedTarget[] {
    return this.staged;
  }

  get workId(): string {
    return this.id;
  }

  protected async commit(): Promise<void> {
    if (this.failCommit) throw await this.discardAfter(new Error('swap failed'));
    this.events.push(`commit ${this.staged.map((entry) => entry.target).join(',')}`);
  }

  protected async discardAfter(error: unknown): Promise<unknown> {
    this.events.push(`discard ${this.staged.splice(0).map((entry) => entry.staging).join(',')}`);
    return new Error(`discarded: ${(error as Error).message}`);
  }
}

describe('StagedDatabaseRestore', () => {
  it('commits after the work succeeded and answers its result', async () => {
    const restore = new Recorder();
    const result = await restore.around(async () => {
      restore.stage('a');
      restore.stage('b');
      return 42;
    });
    expect(result).toBe(42);
    expect(restore.events).toEqual(['stage a', 'stage b', 'commit a,b']);
  });

  it('discards what was staged when the work fails, and throws what the discard answers; no commit', async () => {
    const restore = new Recorder();
    await expect(
      restore.around(async () => {
        restore.stage('a');
        throw new Error('pg_restore failed');
      }),
    ).rejects.toThrow('discarded: pg_restore failed');
    expect(restore.events).toEqual(['stage a', `discard a__staging_${restore.workId}`]);
    expect(restore.entries).toEqual([]);
  });

  it('a failing swap throws what the engine answers', async () => {
    const restore = new Recorder(true);
    await expect(restore.around(async () => restore.stage('a'))).rejects.toThrow('discarded: swap failed');
    expect(restore.events).toEqual(['stage a', `discard a__staging_${restore.workId}`]);
  });

  it('marks work names with 8 hex digits, new for each restore', () => {
    const [one, two] = [new Recorder(), new Recorder()];
    expect(one.workId).toMatch(/^[0-9a-f]{8}$/);
    expect(one.workId).not.toBe(two.workId);
  });

  it('refuses two databases of the backup restored into one target (CONFIG, in the origin of the source)', () => {
    const restore = new Recorder();
    restore.stage('shop');
    let error: unknown;
    try {
      restore.stage('shop');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AdapterError);
    expect((error as AdapterError).code).toBe('CONFIG');
    expect((error as AdapterError).message).toBe('[source-demo] two databases of the backup would both be restored into "shop": map them to different databases');
  });
  it('with overwrite: false, refuses targets that exist (CONFIG, naming them and saying what to send); true or absent lets them be replaced', async () => {
    const refusing = new Recorder(false, false);
    await expect(
      refusing.around(async () => {
        refusing.stage('shop');
        refusing.existingNow(['shop']);
      }),
    ).rejects.toThrow('discarded: [source-demo] the database "shop" exists now and the restore request did not allow replacing it: nothing was replaced. Send "overwrite": true to replace it, or restore into a new database');
    expect(refusing.events).toEqual(['stage shop', `discard shop__staging_${refusing.workId}`]);
    expect(() => new Recorder(false, false).existingNow(['a', 'b'])).toThrow('the databases "a", "b" exist now and the restore request did not allow replacing them');
    expect(() => new Recorder(false, false).existingNow([])).not.toThrow();
    for (const overwrite of [true, undefined]) expect(() => new Recorder(false, overwrite).existingNow(['shop'])).not.toThrow();
  });
});
