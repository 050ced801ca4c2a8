// Issue 47: a volume restore writes into the volume itself, over files of the same name, and the engine did not check
// it before queueing. `restoreWouldReplace` tells the engine the volume holds data (it answers 409 without
// `overwrite: true`), and `RestoreOptions.overwrite: false` makes the restore look again, right before it writes.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { FakeDockerEngine } from './fake-docker.js';
import { tarOf, volumeSource } from './helpers.js';

// Against the labelled fake of the Docker Engine API (no Docker Engine can run on this machine).
const fake = await FakeDockerEngine.start();
afterAll(() => fake.stop());

let appId = '';
let volumeDir = '';
beforeEach(async () => {
  fake.calls.length = 0;
  fake.faults.length = 0;
  fake.containers.clear();
  volumeDir = fake.volumes.get('ow_data') ?? (await fake.addVolume('ow_data'));
  for (const name of await readdir(volumeDir)) await rm(join(volumeDir, name), { recursive: true });
  if (!fake.volumes.has('ow_empty')) await fake.addVolume('ow_empty');
  appId = fake.addRunningContainer('/app', 'ow_data');
});

const config = () => ({ dockerHost: `unix://${fake.socketPath}`, volume: 'ow_data', stopContainers: true });
const signal = () => new AbortController().signal;
const backup = () => tarOf({ 'volume/': '', 'volume/a.txt': 'from the backup' });

describe('overwrite of volume restores (fake Docker Engine API)', () => {
  it('restoreWouldReplace names the volume when it holds data, and nothing for an empty or missing volume; users keep running', async () => {
    await writeFile(join(volumeDir, 'a.txt'), 'live data');
    const source = volumeSource(config());
    expect(await source.restoreWouldReplace!({}, signal())).toEqual(['ow_data']);
    expect(await source.restoreWouldReplace!({ database: 'ow_empty' }, signal())).toEqual([]);
    expect(await source.restoreWouldReplace!({ database: 'ow_missing' }, signal())).toEqual([]);
    expect(fake.containers.get(appId)!.state).toBe('running');
    expect(fake.sequence()).not.toContain('POST /containers/{id}/stop');
    expect(fake.helpers()).toEqual([]);
  });

  it('overwrite: false refuses a volume that holds data when the restore starts writing (it appeared after any check): nothing written', async () => {
    await writeFile(join(volumeDir, 'a.txt'), 'live data');
    const error = await volumeSource(config())
      .restore(await backup(), { target: {}, signal: signal(), overwrite: false })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('volume ow_data is not empty and the restore request did not allow writing over it');
    expect((error as Error).message).toContain('Send "overwrite": true');
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect(await readFile(join(volumeDir, 'a.txt'), 'utf8')).toBe('live data');
    expect(fake.sequence()).not.toContain('PUT /containers/{id}/archive');
    expect(fake.helpers()).toEqual([]);
    expect(fake.containers.get(appId)!.state).toBe('running');
  });

  it('overwrite: false writes into an empty volume; overwrite: true writes over one that holds data', async () => {
    await volumeSource(config()).restore(await backup(), { target: {}, signal: signal(), overwrite: false });
    expect(await readFile(join(volumeDir, 'a.txt'), 'utf8')).toBe('from the backup');
    await writeFile(join(volumeDir, 'a.txt'), 'changed');
    await volumeSource(config()).restore(await backup(), { target: {}, signal: signal(), overwrite: true });
    expect(await readFile(join(volumeDir, 'a.txt'), 'utf8')).toBe('from the backup');
  });
});
