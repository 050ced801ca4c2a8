/**
 * The agent's health report (issue 48 scope 1, docs/agents.md "Agent health"): sent in the hello and then every
 * {@link HEALTH_INTERVAL_MS} as a `health` frame, to a server whose welcome listed the `health` feature. Zod only, so
 * the agent side loads it through `@holdfast/agents/protocol`.
 */
import { z } from 'zod';

/** The welcome feature that says the server accepts health in the hello and `health` frames. */
export const HEALTH_FEATURE = 'health';

/** How often an agent sends its health after the hello (the server keeps only the latest). */
export const HEALTH_INTERVAL_MS = 60_000;

/**
 * Largest `health` frame the server accepts. A real report is about 600 bytes; a larger frame is a protocol error
 * (the connection is closed with 4000, as for every other malformed frame).
 */
export const HEALTH_MAX_FRAME_BYTES = 4 * 1024;

const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const seconds = z.number().min(0).max(1e11);
const load = z.number().min(0).max(1e6);

/** What an agent reports about its host and itself. */
export const agentHealth = z.strictObject({
  /** Seconds the agent process has run. */
  uptimeSeconds: seconds,
  /** Seconds the host has run. */
  hostUptimeSeconds: seconds,
  /** 1, 5 and 15 minute load averages (zeros on Windows). */
  loadAverage: z.tuple([load, load, load]),
  cpus: z.number().int().min(0).max(65_536),
  memory: z.strictObject({ totalBytes: bytes, freeBytes: bytes, processRssBytes: bytes }),
  /** The filesystem of the agent's state directory; null when it could not be read. */
  stateDisk: z.strictObject({ totalBytes: bytes, freeBytes: bytes }).nullable(),
  /** `process.version`, e.g. `v20.19.0`. */
  node: z.string().min(1).max(32),
  /** `linux x64`. */
  platform: z.string().min(1).max(64),
  /** Dump tools found on the agent's PATH at its start, with the first line of their `--version`. */
  tools: z
    .array(z.strictObject({ name: z.string().min(1).max(32).regex(/^[A-Za-z0-9_.-]+$/, 'must be a program name'), version: z.string().min(1).max(120) }))
    .max(16),
});

export type AgentHealth = z.infer<typeof agentHealth>;

/** Agent to server, after the hello: its current health. */
export const healthFrame = z.strictObject({ type: z.literal('health'), health: agentHealth });
export type HealthFrame = z.infer<typeof healthFrame>;
