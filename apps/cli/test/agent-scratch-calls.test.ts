// The agent's scratch folder calls (apps/cli/src/agent/scratch-calls.ts) act only on test restore scratch folders:
// the server cannot use them to make or remove anything else on the agent's disk.
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { CallFrame } from '@holdfast/agents/protocol';
import type { SourceAdapter } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScratchCall } from '../src/agent/scratch-calls.js';

const frame = (method: CallFrame['method'], options: Record<string, unknown>): CallFrame => ({ type: 'call', id: 1, method, adapterId: 'sqlite', config: {}, credentials: {}, options });
const noAdapter = {} as SourceAdapter;
const signal = new AbortController().signal;
const call = (method: CallFrame['method'], options: Record<string, unknown>) => runScratchCall(frame(method, options), noAdapter, signal);

describe('scratch folder calls on the agent', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'hf-agent-scratch-calls-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('makes a scratch folder below a new parent and removes it with its contents', async () => {
    const parent = join(work, 'new', 'parent');
    const directory = (await call('scratchMakeFolder', { parent, prefix: 'holdfast-test-restore-0123456789ab-' })) as string;
    expect(basename(directory)).toMatch(/^holdfast-test-restore-0123456789ab-[A-Za-z0-9]{6}$/);
    expect((await stat(directory)).isDirectory()).toBe(true);
    await writeFile(join(directory, 'restored.sqlite'), 'x');
    expect(await call('scratchRemoveFolder', { directory })).toBe(true);
    expect(await readdir(parent)).toEqual([]);
  });

  it('refuses other names, relative or unnormalized paths, and leaves them alone', async () => {
    const keep = join(work, 'keep');
    await mkdir(keep);
    await writeFile(join(keep, 'data'), 'precious');
    await expect(call('scratchRemoveFolder', { directory: keep })).rejects.toThrow('only a test restore scratch folder');
    await expect(call('scratchRemoveFolder', { directory: `${join(work, 'holdfast-test-restore-0123456789ab-abcdef')}/../keep` })).rejects.toThrow('only a test restore scratch folder');
    await expect(call('scratchRemoveFolder', { directory: 'holdfast-test-restore-0123456789ab-abcdef' })).rejects.toThrow('only a test restore scratch folder');
    await expect(call('scratchMakeFolder', { parent: work, prefix: '../escape-' })).rejects.toThrow('not a test restore scratch folder name');
    await expect(call('scratchMakeFolder', { parent: 'relative', prefix: 'holdfast-test-restore-0123456789ab-' })).rejects.toThrow('absolute path');
    await expect(call('scratchMakeFolder', { parent: work })).rejects.toThrow('without a valid prefix');
    expect(await readdir(keep)).toEqual(['data']);
  });

  it('refuses calls that do not fit the source\'s scratch', async () => {
    await expect(call('scratchFigures', { database: '/x.sqlite' })).rejects.toThrow('has no scratch databases');
    const fileScratch = { scratch: () => ({ placement: 'file', counts: 'table-rows', figures: async () => ({}), integrityCheck: async () => 'ok' }) } as unknown as SourceAdapter;
    await expect(runScratchCall(frame('scratchWriteOwner', { database: '2', owner: 'x' }), fileScratch, signal)).rejects.toThrow('does not apply to this source\'s scratch (file)');
    await expect(runScratchCall(frame('scratchIntegrityCheck', { database: '/x.sqlite' }), fileScratch, signal)).resolves.toBe('ok');
  });
});
