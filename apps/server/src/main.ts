#!/usr/bin/env node
// reflect-metadata must load before any module that declares tsyringe-decorated classes.
import 'reflect-metadata';
import { runServerProcess } from './run.js';

runServerProcess().catch((error: unknown) => {
  // One line, no stack: startup errors (bad env, bad plugin) are messages meant for the operator.
  process.stderr.write(`holdfast: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
