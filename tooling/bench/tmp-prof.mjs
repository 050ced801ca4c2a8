import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { generatePostgres } from './lib/generate.mjs';
const db = 'hf_prof_src';
execFileSync('dropdb', ['-h', '127.0.0.1', '-U', 'root', '--if-exists', db]);
await generatePostgres(db, 256 * 1024 * 1024);
console.log('generated');
