// A test restore's scratch folder on the agent outlives an agent that dies mid-restore: the journal in the agent's
// state directory (apps/cli/src/agent/scratch-journal.ts) lists it, and the next start removes it, and nothing else.
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallFrame } from '@holdfast/agents/protocol';
import type { SourceAdapter } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScratchCall } from '../src/agent/scratch-calls.js';
import { ScratchJournal } from '../src/agent/scratch-journal.js';

const frame = (method: CallFrame['method'], options: Record<string, unknown>): CallFrame => ({ type: 'call', id: 1, method, adapterId: 'sqlite', config: {}, credentials: {}, options });
const signal = new AbortController().signal;
const PREFIX = 'holdfast-test-restore-0123456789ab-';

describe('the agent\'s scratch folder journal', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'hf-agent-scratch-journal-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('records a folder while it exists, forgets it when removed, and the next start sweeps one a crash left', async () => {
    const stateDir = join(work, 'state');
    const parent = join(work, 'scratch');
    await mkdir(stateDir);
    const journal = new ScratchJournal(stateDir);
    const call = (method: CallFrame['method'], options: Record<string, unknown>) => runScratchCall(frame(method, options), {} as SourceAdapter, signal, journal);

    const finished = (await call('scratchMakeFolder', { parent, prefix: PREFIX })) as string;
    expect(JSON.parse(await readFile(join(stateDir, 'scratch-folders.json'), 'utf8'))).toEqual([finished]);
    expect(await call('scratchRemoveFolder', { directory: finished })).toBe(true);
    expect(await readdir(stateDir)).toEqual([]);

    // A test restore the agent never finished: its folder holds the restored file when the process dies.
    const [left, other] = await Promise.all([call('scratchMakeFolder', { parent, prefix: PREFIX }), call('scratchMakeFolder', { parent, prefix: PREFIX })]) as [string, string];
    await writeFile(join(left, 'restored.sqlite'), 'rows');
    await writeFile(join(other, 'restored.sqlite'), 'rows');
    expect((JSON.parse(await readFile(join(stateDir, 'scratch-folders.json'), 'utf8')) as string[]).sort()).toEqual([left, other].sort());

    const restarted = new ScratchJournal(stateDir);
    expect((await restarted.sweep()).sort()).toEqual([left, other].sort());
    expect(await readdir(parent)).toEqual([]);
    expect(await readdir(stateDir)).toEqual([]);
    expect(await restarted.sweep()).toEqual([]);
  });

  it('never removes a path the journal lists that is not a scratch folder (a hand-edited journal)', async () => {
    const stateDir = join(work, 'state-edited');
    await mkdir(stateDir);
    const precious = join(work, 'precious');
    const lookalike = `${join(work, 'precious', 'holdfast-test-restore-0123456789ab-abcdef')}/../../precious/holdfast-test-restore-0123456789ab-abcdef`;
    await mkdir(join(precious, 'holdfast-test-restore-0123456789ab-abcdef'), { recursive: true });
    await writeFile(join(precious, 'data'), 'keep');
    await writeFile(join(stateDir, 'scratch-folders.json'), JSON.stringify([precious, lookalike, 'holdfast-test-restore-0123456789ab-abcdef', 42]));
    expect(await new ScratchJournal(stateDir).sweep()).toEqual([]);
    expect((await stat(precious)).isDirectory()).toBe(true);
    expect((await readdir(precious)).sort()).toEqual(['data', 'holdfast-test-restore-0123456789ab-abcdef']);
    expect(await readdir(stateDir)).toEqual([]);
  });

  it('a journal that cannot be read sweeps nothing and does not stop the agent', async () => {
    const stateDir = join(work, 'state-garbled');
    await mkdir(stateDir);
    await writeFile(join(stateDir, 'scratch-folders.json'), '{not json');
    expect(await new ScratchJournal(stateDir).sweep()).toEqual([]);
  });
});
