#!/usr/bin/env node
// `npm run generate -w @holdfast/client`: regenerates src/generated/schema.ts (needs a built server:
// `npx turbo run build --filter=@holdfast/server...`).
import { writeFile } from 'node:fs/promises';
import { fetchOpenApiDocument } from './openapi-document.mjs';
import { renderSchema } from './render-schema.mjs';

const target = new URL('../src/generated/schema.ts', import.meta.url);
const text = await renderSchema(await fetchOpenApiDocument());
await writeFile(target, text);
process.stdout.write(`wrote ${target.pathname} (${text.length} characters)\n`);
