// A test source with a point-in-time mode whose readiness answer comes from its config, so the catalog's save-time
// check can be driven through every outcome without a database server: problems, warnings only, an unreachable
// server (the check rejects as a real adapter's connection failure does) and a server that never answers. The real
// adapters against real servers are tested on the assembled server (apps/server/test/pitr-job-readiness.test.ts).
import { AdapterError, defineSourceAdapter, inject, injectable, TOKENS, z, type HealthResult, type PointInTimeReadiness, type PointInTimeSupport } from '@holdfast/sdk';

const pitrConfig = z.strictObject({
  host: z.string().min(1),
  mode: z.enum(['logical', 'point-in-time']).default('logical'),
  problems: z.array(z.string()).default([]),
  warnings: z.array(z.string()).default([]),
  answer: z.enum(['normal', 'unreachable', 'silent']).default('normal'),
});

/** Every readiness call: the host asked, and (for a silent server) whether the caller's signal aborted it. */
export const readinessCalls: Array<{ host: string; aborted: boolean }> = [];

@injectable()
class FakePitrDatabase {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof pitrConfig>) {}

  pointInTime(): PointInTimeSupport | null {
    if (this.config.mode !== 'point-in-time') return null;
    const notUsed = () => Promise.reject(new Error('not used'));
    return {
      logKind: 'postgres-wal',
      baseBackup: notUsed,
      openChangeLogStream: () => {
        throw new Error('not used');
      },
      restoreToPoint: notUsed,
      readiness: ({ signal }) => this.readiness(signal),
    };
  }

  private readiness(signal: AbortSignal): Promise<PointInTimeReadiness> {
    const call = { host: this.config.host, aborted: false };
    readinessCalls.push(call);
    const { problems, warnings, answer, host } = this.config;
    if (answer === 'unreachable') return Promise.reject(new AdapterError({ kind: 'source', id: 'fake-pitr-db' }, 'TRANSIENT', `cannot connect to ${host}:5432: connect ECONNREFUSED`));
    if (answer === 'normal') return Promise.resolve({ problems, warnings });
    // Silent: answers only when the caller gives up, as a check cut off by its signal does.
    return new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        call.aborted = true;
        reject(new AdapterError({ kind: 'source', id: 'fake-pitr-db' }, 'ABORTED', 'stopped'));
      });
    });
  }

  async check(): Promise<HealthResult> {
    return { ok: true, message: 'connected' };
  }
  async detectVersion() {
    return { version: '15.4' };
  }
  async listDatabases() {
    return ['app'];
  }
  async dump(): Promise<never> {
    throw new Error('not used');
  }
  async restore(): Promise<never> {
    throw new Error('not used');
  }
}

export const fakePitrDatabase = defineSourceAdapter({
  id: 'fake-pitr-db',
  displayName: 'Fake database with a point-in-time mode',
  configSchema: pitrConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: false, fileArchive: false },
  implementation: FakePitrDatabase,
});
