#!/usr/bin/env node
// reflect-metadata must load before any module that declares tsyringe-decorated classes.
import 'reflect-metadata';
import { createProgram } from './program.js';

createProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    // One line, no stack: these are operator-facing messages (bad env, bad plugin, database unreachable).
    process.stderr.write(`holdfast: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
