import { execFile } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import { arch, cpus, freemem, loadavg, platform, totalmem, uptime } from 'node:os';
import type { AgentHealth } from '@holdfast/agents/protocol';

/**
 * Dump tools whose version the agent reports (docs/agents.md "Agent health"). Asked once at the agent's start: a
 * `--version` is cheap, but not every minute, and a tool installed later shows after a restart.
 */
export const HEALTH_TOOLS = ['pg_dump', 'pg_restore', 'psql', 'mariadb-dump', 'mysqldump', 'mongodump', 'redis-cli', 'sqlite3'] as const;

/** Longest version line reported (the server refuses longer). */
const MAX_VERSION_CHARS = 120;

/** The first line of `<tool> --version`, or undefined when the tool is missing, fails or takes over 5 s. */
function versionOf(tool: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(tool, ['--version'], { timeout: 5_000, maxBuffer: 64 * 1024, windowsHide: true }, (error, stdout) => {
      if (error) return resolve(undefined);
      const line = String(stdout).split('\n').find((text) => text.trim() !== '')?.trim();
      resolve(line ? line.slice(0, MAX_VERSION_CHARS) : undefined);
    });
  });
}

/** The dump tools found on PATH with their versions, in {@link HEALTH_TOOLS} order. */
export async function detectTools(tools: readonly string[] = HEALTH_TOOLS): Promise<AgentHealth['tools']> {
  const versions = await Promise.all(tools.map(async (name) => ({ name, version: await versionOf(name) })));
  return versions.filter((tool): tool is { name: string; version: string } => tool.version !== undefined);
}

/** Free and total bytes of the filesystem holding `path`; null when it cannot be read. */
async function diskOf(path: string): Promise<AgentHealth['stateDisk']> {
  try {
    const info = await statfs(path);
    return { totalBytes: info.blocks * info.bsize, freeBytes: info.bavail * info.bsize };
  } catch {
    return null;
  }
}

/** The agent's health report: its host's load, memory and uptime, its state directory's disk, Node and the tools. */
export class AgentHealthProbe {
  private readonly tools: Promise<AgentHealth['tools']>;

  constructor(
    private readonly stateDir: string,
    tools: Promise<AgentHealth['tools']> = detectTools(),
  ) {
    this.tools = tools.catch(() => []);
  }

  async report(): Promise<AgentHealth> {
    const [one, five, fifteen] = loadavg();
    return {
      uptimeSeconds: Math.round(process.uptime()),
      hostUptimeSeconds: Math.round(uptime()),
      loadAverage: [round2(one ?? 0), round2(five ?? 0), round2(fifteen ?? 0)],
      cpus: cpus().length,
      memory: { totalBytes: totalmem(), freeBytes: freemem(), processRssBytes: process.memoryUsage.rss() },
      stateDisk: await diskOf(this.stateDir),
      node: process.version.slice(0, 32),
      platform: `${platform()} ${arch()}`.slice(0, 64),
      tools: (await this.tools).slice(0, 16),
    };
  }
}

const round2 = (value: number) => Math.round(Math.max(0, value) * 100) / 100;

/** `HOLDFAST_AGENT_HEALTH_SECONDS` (default 60, 1 to 3600): how often the agent sends its health; bad values fall back. */
export function healthIntervalFromEnv(env: NodeJS.ProcessEnv, fallbackMs: number): number {
  const raw = env.HOLDFAST_AGENT_HEALTH_SECONDS;
  if (raw === undefined || !/^\d+$/.test(raw)) return fallbackMs;
  const seconds = Number(raw);
  return seconds >= 1 && seconds <= 3600 ? seconds * 1000 : fallbackMs;
}
