import { hostname } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { EXIT } from '../remote/exit-codes.js';

interface AgentOptions {
  server: string;
  stateDir: string;
  token?: string;
  maxBackoff?: number;
}

function seconds(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 1 || parsed > 3600) throw new InvalidArgumentError('must be whole seconds from 1 to 3600');
  return parsed;
}

/**
 * `holdfast agent`: runs a remote agent next to the data (docs/agents.md). It keeps its Ed25519 key pair in the state
 * directory, enrolls once with the token, then authenticates with its key on one outbound WebSocket, reconnecting
 * with backoff. It holds no job configuration. Logs are JSON lines on stdout.
 */
export function addAgentCommand(program: Command, version: string): void {
  program
    .command('agent')
    .description('run a remote agent: one outbound connection to the server (see docs/agents.md)')
    .requiredOption('--server <url>', 'server base URL, e.g. https://backups.example.com')
    .requiredOption('--state-dir <dir>', 'private directory (mode 0700) for the key pair and the enrollment')
    .option('--token <token>', 'one-time enrollment token from POST /api/agents (first start only; ignored once enrolled; default: HOLDFAST_AGENT_TOKEN)')
    .option('--max-backoff <seconds>', 'longest wait between reconnection attempts (default 30)', seconds)
    .action(async (options: AgentOptions): Promise<void> => {
      const { loadIdentity, AgentStateError } = await import('../agent/agent-state.js');
      const { runAgent, connectUrl } = await import('../agent/agent-connection.js');
      const { proxyAgentFor } = await import('../agent/proxy.js');
      const { loadableSourceAdapters } = await import('../agent/source-adapters.js');
      const log = (level: string, msg: string, fields: Record<string, unknown> = {}): void => {
        process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
      };
      const fail = (code: number, message: string) => {
        log('error', message);
        process.exitCode = code;
      };
      try {
        connectUrl(options.server);
      } catch (error) {
        return fail(EXIT.usage, (error as Error).message);
      }
      // The environment keeps the token out of the process list other users can read (`ps`).
      options.token ??= process.env.HOLDFAST_AGENT_TOKEN || undefined;
      let identity;
      try {
        identity = await loadIdentity(options.stateDir);
      } catch (error) {
        return fail(error instanceof AgentStateError ? EXIT.usage : EXIT.error, (error as Error).message);
      }
      if (identity.agentId === undefined && !options.token) {
        return fail(EXIT.usage, 'this agent is not enrolled yet: start it once with --token <enrollment token> (POST /api/agents)');
      }
      if (identity.agentId !== undefined && options.token) {
        log('warn', 'already enrolled: --token is ignored (to pair again, empty the state directory and use a new token)', { agentId: identity.agentId });
      }
      const { packages: adapters, registry } = await loadableSourceAdapters(process.env);
      const proxy = proxyAgentFor(options.server, process.env);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      log('info', 'agent starting', { version, host: hostname(), adapters, agentId: identity.agentId ?? null, proxy: proxy?.proxy ?? null });
      const exit = await runAgent({
        server: options.server,
        stateDir: options.stateDir,
        identity,
        token: identity.agentId === undefined ? options.token : undefined,
        version,
        host: hostname(),
        adapters,
        registry,
        maxBackoffMs: options.maxBackoff === undefined ? undefined : options.maxBackoff * 1000,
        proxyAgent: proxy?.agent,
        log,
        signal: stop.signal,
      });
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      if (exit.stopped) return log('info', 'agent stopped');
      fail(EXIT.auth, `refused by the server: ${exit.reason ?? `close code ${exit.code}`}`);
    });
}
