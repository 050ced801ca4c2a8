import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@holdfast/kernel';
import type { OrmDatabase } from '@holdfast/orm-port';
import type { AgentHealth } from './connection/agent-health.js';
import { enrollmentTokenHash, newEnrollmentToken } from './enrollment-token.js';
import { AGENTS_TABLE } from './store/migration.js';

/** Presence and lifecycle of an agent. */
export type AgentStatus = 'pending' | 'offline' | 'online' | 'revoked';

/** An agent as the API shows it (never the enrollment token or its hash). */
export interface AgentView {
  id: string;
  name: string;
  enabled: boolean;
  status: AgentStatus;
  /** Ed25519 public key (raw, base64url) once enrolled; public by nature. */
  publicKey: string | null;
  version: string | null;
  host: string | null;
  adapters: string[];
  /** The agent's latest health report and when the server received it; null before the first (or from an older agent). */
  health: (AgentHealth & { reportedAt: string }) | null;
  /** When the outstanding enrollment token expires; null when none is outstanding. */
  enrollmentExpiresAt: string | null;
  lastSeenAt: string | null;
  revokedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface AgentRecord {
  id: string;
  name: string;
  enabled: boolean | number;
  status: string;
  public_key: string | null;
  version: string | null;
  host: string | null;
  adapters: string;
  health: string | null;
  enrollment_token_hash: string | null;
  enrollment_expires_at: number | string | null;
  last_seen_at: Date | number | string | null;
  holder_id: string | null;
  revoked_at: Date | number | string | null;
  created_at: Date | number | string;
  updated_at: Date | number | string;
}

/** A datetime column as libsql (epoch ms or text) or PostgreSQL (Date) returns it. */
function dateOf(value: Date | number | string): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value);
  return /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
}
const isoOrNull = (value: Date | number | string | null) => (value === null ? null : dateOf(value).toISOString());

function viewOf(row: AgentRecord): AgentView {
  let adapters: string[] = [];
  try {
    const parsed: unknown = JSON.parse(row.adapters);
    if (Array.isArray(parsed)) adapters = parsed.filter((item): item is string => typeof item === 'string');
  } catch {
    // A damaged column shows as no adapters rather than failing the listing.
  }
  let health: AgentView['health'] = null;
  try {
    const parsed: unknown = row.health ? JSON.parse(row.health) : null;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) health = parsed as AgentView['health'];
  } catch {
    // As for adapters: a damaged column shows as no report.
  }
  const expires = row.enrollment_token_hash && row.enrollment_expires_at !== null ? new Date(Number(row.enrollment_expires_at)).toISOString() : null;
  return {
    id: row.id,
    name: row.name,
    enabled: Boolean(row.enabled),
    status: row.status as AgentStatus,
    publicKey: row.public_key,
    version: row.version,
    host: row.host,
    adapters,
    health,
    enrollmentExpiresAt: expires,
    lastSeenAt: isoOrNull(row.last_seen_at),
    revokedAt: isoOrNull(row.revoked_at),
    createdAt: dateOf(row.created_at).toISOString(),
    updatedAt: dateOf(row.updated_at).toISOString(),
  };
}

/** Why an enrollment token was refused (the close reason names it). */
export type EnrollmentRefusal = 'unknown or already used' | 'expired' | 'agent revoked' | 'agent disabled';

/** True for a unique-constraint violation on either database. */
function isUniqueViolation(error: unknown): boolean {
  const text = `${(error as { code?: string }).code ?? ''} ${(error as Error).message ?? ''}`;
  return /23505|UNIQUE constraint|SQLITE_CONSTRAINT/i.test(text);
}

/** Agents per presence update statement of the heartbeat. */
const TOUCH_BATCH = 500;

/** Agents per health update statement (three bound parameters each). */
const HEALTH_BATCH = 200;

/** The stored form of a health report: the report and when the server received it. */
function healthColumn(health: AgentHealth, reportedAt: Date): string {
  return JSON.stringify({ ...health, reportedAt: reportedAt.toISOString() });
}

/** What the control poll of a process needs to know about an agent it holds (docs/agents.md "Several server processes"). */
export interface HeldAgentState {
  id: string;
  enabled: boolean;
  status: AgentStatus;
  holderId: string | null;
}

/** The `agents` table: the agents' identity, tokens and presence. */
export class AgentStore {
  /**
   * This process's id as the holder of the agents connected to it: the engine's process id once the engine attached
   * it (several processes on one PostgreSQL), a random one before or without an engine.
   */
  holderId: string = randomUUID();

  constructor(
    private readonly database: () => OrmDatabase,
    private readonly enrollmentTtlMs: number,
  ) {}

  /** True on PostgreSQL, where several server processes may share the table. */
  isShared(): boolean {
    return this.database().dialect === 'postgresql';
  }

  private table() {
    return this.database().em().getKnex()<AgentRecord>(AGENTS_TABLE);
  }

  private async row(id: string): Promise<AgentRecord | undefined> {
    return (await this.table().where({ id }).first()) as AgentRecord | undefined;
  }

  private async required(id: string): Promise<AgentRecord> {
    const row = await this.row(id);
    if (!row) throw new NotFoundError('Agent not found');
    return row;
  }

  private freshToken(now: number) {
    const token = newEnrollmentToken();
    return { token, hash: enrollmentTokenHash(token), expiresAt: now + this.enrollmentTtlMs };
  }

  async list(): Promise<AgentView[]> {
    const rows = (await this.table().select('*').orderBy([{ column: 'created_at', order: 'asc' }, { column: 'id' }])) as AgentRecord[];
    return rows.map(viewOf);
  }

  async get(id: string): Promise<AgentView> {
    return viewOf(await this.required(id));
  }

  /** A new pending agent and its first enrollment token (returned once, stored hashed). */
  async create(name: string): Promise<{ agent: AgentView; token: string }> {
    const now = Date.now();
    const fresh = this.freshToken(now);
    const id = randomUUID();
    try {
      await this.table().insert({
        id,
        name,
        enabled: true,
        status: 'pending',
        adapters: '[]',
        enrollment_token_hash: fresh.hash,
        enrollment_expires_at: fresh.expiresAt,
        created_at: new Date(now),
        updated_at: new Date(now),
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`An agent named "${name}" already exists`);
      throw error;
    }
    return { agent: await this.get(id), token: fresh.token };
  }

  /** Rename and/or enable or disable; a revoked agent cannot change. */
  async update(id: string, patch: { name?: string; enabled?: boolean }): Promise<{ before: AgentView; after: AgentView }> {
    const before = viewOf(await this.required(id));
    if (before.status === 'revoked') throw new ConflictError('Agent is revoked: it cannot be changed');
    const changes: Partial<AgentRecord> = {};
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.enabled !== undefined) changes.enabled = patch.enabled;
    if (Object.keys(changes).length === 0) return { before, after: before };
    try {
      await this.table().where({ id }).whereNull('revoked_at').update({ ...changes, updated_at: new Date() });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`An agent named "${patch.name ?? ''}" already exists`);
      throw error;
    }
    return { before, after: await this.get(id) };
  }

  /**
   * A new enrollment token, replacing any outstanding one: for a pending agent (the first token expired or was
   * lost) or to re-pair an enrolled one (its state directory was lost; the key that enrolls with the token replaces
   * the old key, which keeps working until then). Refused for a revoked agent.
   */
  async issueToken(id: string): Promise<{ agent: AgentView; token: string }> {
    const row = await this.required(id);
    if (row.status === 'revoked') throw new ConflictError('Agent is revoked: it can never enroll again; create a new agent');
    const now = Date.now();
    const fresh = this.freshToken(now);
    await this.table().where({ id }).whereNull('revoked_at').update({ enrollment_token_hash: fresh.hash, enrollment_expires_at: fresh.expiresAt, updated_at: new Date(now) });
    return { agent: await this.get(id), token: fresh.token };
  }

  /** Revoked for good: the key is refused forever, any outstanding token is void. Idempotent. */
  async revoke(id: string): Promise<{ before: AgentView; after: AgentView }> {
    const before = viewOf(await this.required(id));
    if (before.status !== 'revoked') {
      const now = new Date();
      await this.table().where({ id }).update({ status: 'revoked', revoked_at: now, enrollment_token_hash: null, enrollment_expires_at: null, updated_at: now });
    }
    return { before, after: await this.get(id) };
  }

  /** The agent an enrollment token belongs to, or why it cannot be used now. */
  async agentForToken(token: string): Promise<{ agent: AgentView } | { refusal: EnrollmentRefusal }> {
    const row = (await this.table().where({ enrollment_token_hash: enrollmentTokenHash(token) }).first()) as AgentRecord | undefined;
    if (!row) return { refusal: 'unknown or already used' };
    if (row.revoked_at !== null) return { refusal: 'agent revoked' };
    if (Number(row.enrollment_expires_at) <= Date.now()) return { refusal: 'expired' };
    if (!row.enabled) return { refusal: 'agent disabled' };
    return { agent: viewOf(row) };
  }

  /**
   * Uses the token once: stores the agent's key and voids the token in one conditional update, so two connections
   * racing with the same token cannot both enroll. False when it was used, replaced or expired meanwhile.
   */
  async consumeToken(agentId: string, token: string, publicKey: string): Promise<boolean> {
    const now = Date.now();
    const changed = await this.table()
      .where({ id: agentId, enrollment_token_hash: enrollmentTokenHash(token) })
      .where('enrollment_expires_at', '>', now)
      .whereNull('revoked_at')
      .update({
        public_key: publicKey,
        enrollment_token_hash: null,
        enrollment_expires_at: null,
        status: 'offline',
        updated_at: new Date(now),
      });
    return Number(changed) === 1;
  }

  /** The stored row an authenticating agent claims, as a view (undefined when unknown). */
  async find(agentId: string): Promise<AgentView | undefined> {
    const row = await this.row(agentId);
    return row ? viewOf(row) : undefined;
  }

  /** Records a hello: online, what it reported, seen now. Not for a revoked agent (revoke won the race). */
  async markOnline(agentId: string, hello: { version: string; host: string; adapters: string[]; health?: AgentHealth }): Promise<boolean> {
    const now = new Date();
    // An agent without health (older version) clears the previous report rather than showing a stale one as current.
    const health = hello.health ? healthColumn(hello.health, now) : null;
    const changed = await this.table()
      .where({ id: agentId })
      .whereNull('revoked_at')
      .update({ status: 'online', holder_id: this.holderId, version: hello.version, host: hello.host, adapters: JSON.stringify(hello.adapters), health, last_seen_at: now, updated_at: now });
    return Number(changed) === 1;
  }

  /** A pong or a frame arrived: the agent is alive now. */
  async touch(agentId: string): Promise<void> {
    await this.touchAll([agentId]);
  }

  /**
   * The heartbeat's presence write: every agent that answered the previous ping is seen now, in one statement per
   * {@link TOUCH_BATCH} agents (bound parameters stay far below SQLite's and PostgreSQL's limits).
   */
  async touchAll(agentIds: readonly string[]): Promise<void> {
    const now = new Date();
    for (let start = 0; start < agentIds.length; start += TOUCH_BATCH) {
      await this.table().whereIn('id', agentIds.slice(start, start + TOUCH_BATCH)).where({ status: 'online', holder_id: this.holderId }).update({ last_seen_at: now });
    }
  }

  /**
   * The heartbeat's health write: the latest report of every agent that sent one since the previous round, in one
   * statement per {@link HEALTH_BATCH} agents (a `case` on the id), like the presence write.
   */
  async recordHealth(reports: ReadonlyArray<{ agentId: string; health: AgentHealth; reportedAt: Date }>): Promise<void> {
    const knex = this.database().em().getKnex();
    for (let start = 0; start < reports.length; start += HEALTH_BATCH) {
      const batch = reports.slice(start, start + HEALTH_BATCH);
      const cases = batch.map(() => 'when ? then ?').join(' ');
      const bindings = batch.flatMap((report) => [report.agentId, healthColumn(report.health, report.reportedAt)]);
      await this.table()
        .whereIn('id', batch.map((report) => report.agentId))
        .whereNull('revoked_at')
        .update({ health: knex.raw(`case id ${cases} end`, bindings) as unknown as string });
    }
  }

  /**
   * The connection ended: offline, unless it was revoked meanwhile (that status stays) or the agent is already held
   * by another process (it reconnected there before this connection's end was noticed).
   */
  async markOffline(agentId: string): Promise<void> {
    const now = new Date();
    await this.table()
      .where({ id: agentId, status: 'online' })
      .where((q) => q.where({ holder_id: this.holderId }).orWhereNull('holder_id'))
      .update({ status: 'offline', holder_id: null, last_seen_at: now, updated_at: now });
  }

  /**
   * Online agents whose holder stopped refreshing their presence (`last_seen_at` older than `staleAfterMs`): their
   * process crashed or was killed, so they are offline. At start, and then on every heartbeat round. On the embedded
   * database (one process) every `online` row is this process's own at start: all are cleared then, none after.
   */
  async clearStalePresence(staleAfterMs: number, isStart: boolean): Promise<number> {
    const now = new Date();
    if (this.database().dialect !== 'postgresql') {
      if (!isStart) return 0;
      return Number(await this.table().where({ status: 'online' }).update({ status: 'offline', holder_id: null, updated_at: now }));
    }
    return Number(
      await this.table()
        .where({ status: 'online' })
        .where((q) => q.whereNull('last_seen_at').orWhere('last_seen_at', '<', new Date(now.getTime() - staleAfterMs)).orWhereNull('holder_id'))
        .update({ status: 'offline', holder_id: null, updated_at: now }),
    );
  }

  /** The process holding the agent's live connection, when its presence is fresh; null otherwise. */
  async holderOf(agentId: string, staleAfterMs: number): Promise<string | null> {
    const row = await this.row(agentId);
    if (!row || row.status !== 'online' || !row.holder_id || row.last_seen_at === null) return null;
    return dateOf(row.last_seen_at).getTime() >= Date.now() - staleAfterMs ? row.holder_id : null;
  }

  /**
   * Of the agents connected to this process, those it must let go: disabled or revoked (possibly through another
   * process's API), or now held by another process (the agent reconnected there).
   */
  async heldToRelease(agentIds: readonly string[]): Promise<HeldAgentState[]> {
    const found: HeldAgentState[] = [];
    for (let start = 0; start < agentIds.length; start += TOUCH_BATCH) {
      const rows = (await this.table()
        .select('id', 'enabled', 'status', 'holder_id')
        .whereIn('id', agentIds.slice(start, start + TOUCH_BATCH))
        .where((q) => q.where({ enabled: false }).orWhere({ status: 'revoked' }).orWhere((inner) => inner.whereNotNull('holder_id').whereNot({ holder_id: this.holderId })))) as AgentRecord[];
      for (const row of rows) found.push({ id: row.id, enabled: Boolean(row.enabled), status: row.status as AgentStatus, holderId: row.holder_id });
    }
    return found;
  }
}
