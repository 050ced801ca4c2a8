import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM scripts without declarations
import { fetchOpenApiDocument } from '../scripts/openapi-document.mjs';
// @ts-expect-error plain ESM scripts without declarations
import { renderSchema } from '../scripts/render-schema.mjs';

describe('generated client', () => {
  it('matches a fresh generation from the assembled server (run `npm run generate -w @holdfast/client` when this fails)', async () => {
    const committed = await readFile(new URL('../src/generated/schema.ts', import.meta.url), 'utf8');
    const document = (await fetchOpenApiDocument()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain('/api/jobs/{id}/run');
    const fresh = (await renderSchema(document)) as string;
    // Compare line by line first so a failure names the first differing line instead of a 400 kB blob.
    const freshLines = fresh.split('\n');
    const committedLines = committed.split('\n');
    const first = freshLines.findIndex((line, index) => line !== committedLines[index]);
    expect(first === -1 ? null : { line: first + 1, committed: committedLines[first], fresh: freshLines[first] }).toBeNull();
    expect(committed).toBe(fresh);
  }, 60_000);

  it('renders a different client for a different document (the comparison can fail)', async () => {
    const fresh = (await renderSchema({ openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/api/x': { get: { responses: { 200: { description: 'x' } } } } } })) as string;
    const committed = await readFile(new URL('../src/generated/schema.ts', import.meta.url), 'utf8');
    expect(fresh).toContain('"/api/x"');
    expect(fresh).not.toBe(committed);
  });
});
