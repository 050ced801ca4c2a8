#!/usr/bin/env node
// reflect-metadata must load before any module that declares tsyringe-decorated classes.
import 'reflect-metadata';
import { CommanderError, type Command } from 'commander';
import { createProgram } from './program.js';
import { describeFailure, EXIT } from './remote/exit-codes.js';

const program = createProgram();
// Usage errors (unknown command, missing argument) exit 10 like other configuration problems; help and version 0.
const overrideExit = (command: Command): void => {
  command.exitOverride();
  command.commands.forEach(overrideExit);
};
overrideExit(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CommanderError) {
    process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
  }
  // One line, no stack: these are operator-facing messages (bad env, bad plugin, unreachable server, bad key).
  const { message, exitCode } = describeFailure(error);
  process.stderr.write(`holdfast: ${message}\n`);
  process.exit(exitCode);
});
