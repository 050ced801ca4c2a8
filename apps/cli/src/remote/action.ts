import type { Command } from 'commander';
import type { HoldfastClient } from '@holdfast/client';
import type { CliOutput } from '../output.js';
import { connect } from './connection.js';

/** What a remote action gets: the connected client, its output, and the parsed options. */
export interface RemoteContext<O> {
  client: HoldfastClient;
  output: CliOutput;
  options: O;
  command: Command;
}

/**
 * Wraps a remote command's action: connects with the resolved target and sets the exit code the work returns
 * (errors propagate to main.ts, which prints one line and picks the code).
 */
export function remote<O>(output: CliOutput, work: (context: RemoteContext<O>, ...args: string[]) => Promise<number | void>) {
  return async (...received: unknown[]) => {
    const command = received.at(-1) as Command;
    // With globals: `adapters --json list` and `adapters list --json` both land here (the parent also has --json).
    const options = command.optsWithGlobals() as O;
    const args = received.slice(0, -2).filter((value): value is string => typeof value === 'string');
    const client = await connect(command);
    const code = await work({ client, output, options, command }, ...args);
    if (typeof code === 'number' && code !== 0) process.exitCode = code;
  };
}

/** Adds `--json` (every remote command has it) and the examples shown at the end of `--help`. */
export function withJson(command: Command, examples: string[] = []): Command {
  command.option('--json', 'print JSON instead of text');
  if (examples.length) command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  $ ${line}`).join('\n')}\n`);
  return command;
}
