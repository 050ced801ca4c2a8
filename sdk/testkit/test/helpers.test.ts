import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  closedPortUrl,
  deterministicStream,
  listChildProcesses,
  makeTempDir,
  readAll,
  sha256OfStream,
  startHangingEndpoint,
  startHttpReceiver,
  startRssSampler,
  waitForNoNewChildren,
} from '../src/index.js';
import { existsSync } from 'node:fs';

describe('testkit helpers', () => {
  it('generates the same bytes for the same seed, other bytes for another seed, in the asked size', async () => {
    const a = await sha256OfStream(deterministicStream(300_000, { seed: 'x' }));
    const b = await sha256OfStream(deterministicStream(300_000, { seed: 'x' }));
    const c = await sha256OfStream(deterministicStream(300_000, { seed: 'y' }));
    expect(a).toEqual(b);
    expect(a.bytes).toBe(300_000);
    expect(c.sha256).not.toBe(a.sha256);
  });

  it('fails a deterministic stream on purpose after the given bytes', async () => {
    let received = 0;
    const stream = deterministicStream(1_000_000, { failAfterBytes: 100_000 });
    await expect(
      (async () => {
        for await (const chunk of stream) received += (chunk as Buffer).length;
      })(),
    ).rejects.toThrow('failed on purpose after 100000 bytes');
    expect(received).toBe(100_000);
  });

  it('hashes like node:crypto would (known SHA-256 of "abc")', async () => {
    const { Readable } = await import('node:stream');
    expect(await sha256OfStream(Readable.from([Buffer.from('a'), 'bc']))).toEqual({
      sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      bytes: 3,
    });
  });

  it('measures RSS growth of a deliberate 48 MiB allocation', async () => {
    const sampler = startRssSampler(5);
    const hog = Buffer.alloc(48 * 1024 * 1024, 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const report = sampler.stop();
    expect(hog.length).toBeGreaterThan(0);
    expect(report.growth).toBeGreaterThan(40 * 1024 * 1024);
    expect(report.samples).toBeGreaterThan(1);
  });

  it('creates and removes temp dirs', async () => {
    const dir = await makeTempDir();
    expect(existsSync(dir.path)).toBe(true);
    await dir.remove();
    expect(existsSync(dir.path)).toBe(false);
  });

  it('sees a child process of this process until it ends', async () => {
    const before = await listChildProcesses();
    const child = spawn('sleep', ['5']);
    await new Promise((resolve) => child.once('spawn', resolve));
    expect(await listChildProcesses()).toContain(child.pid);
    expect(await waitForNoNewChildren(before, 200)).toEqual([child.pid]);
    child.kill();
    expect(await waitForNoNewChildren(before, 3_000)).toEqual([]);
  });

  it('records requests on the receiver and answers what it is told', async () => {
    const receiver = await startHttpReceiver({ status: 202, body: 'ok' });
    try {
      const response = await fetch(`${receiver.url}/x?y=1`, { method: 'PUT', body: 'payload', headers: { 'x-a': 'b' } });
      expect(response.status).toBe(202);
      expect(receiver.requests).toHaveLength(1);
      expect(receiver.requests[0]).toMatchObject({ method: 'PUT', url: '/x?y=1', headers: expect.objectContaining({ 'x-a': 'b' }) });
      expect(receiver.requests[0]?.body.toString()).toBe('payload');
    } finally {
      await receiver.close();
    }
  });

  it('keeps a hanging endpoint silent and refuses connections on a closed port', async () => {
    const hanging = await startHangingEndpoint();
    try {
      const answered = await new Promise<string>((resolve) => {
        const req = request(hanging.url, { timeout: 300 }, () => resolve('answered'));
        req.on('timeout', () => {
          req.destroy();
          resolve('timed out');
        });
        req.on('error', () => undefined);
        req.end();
      });
      expect(answered).toBe('timed out');
      expect(hanging.connections()).toBe(1);
    } finally {
      await hanging.close();
    }
    const port = Number(new URL(await closedPortUrl()).port);
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve('connected'));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(outcome).toBe('ECONNREFUSED');
  });

  it('reads small streams whole', async () => {
    expect((await readAll(deterministicStream(10, { seed: 's' }))).length).toBe(10);
  });
});
