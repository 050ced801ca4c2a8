import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { fetchHostKeyFingerprint, SshConnectError, startRemoteCommand, type SshTarget } from '../../src/remote-exec/index.js';

let target: SshTarget;
let password: string;

// The suite starts (or reuses) the shared test sshd itself (127.0.0.1:2222, user sshtest) through its launcher,
// because the sdk's vitest config has no globalSetup for it.
const SSHD_LAUNCHER = new URL('../../../../tooling/test-services/sshd.mjs', import.meta.url).pathname;
const SSHD_STATE_FILE = '/tmp/holdfast-test-services/sshd/sshd.json';

beforeAll(() => {
  execFileSync(process.execPath, [SSHD_LAUNCHER], { stdio: 'pipe' });
  const state = JSON.parse(readFileSync(SSHD_STATE_FILE, 'utf8')) as { host: string; port: number; user: string; password: string; keyPath: string; hostKeySha256: string };
  password = state.password;
  target = { host: state.host, port: state.port, username: state.user, privateKey: readFileSync(state.keyPath), hostKeySha256: state.hostKeySha256 };
});

const remoteProcesses = (marker: string) =>
  execFileSync('ps', ['-u', 'sshtest', '-o', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker));

describe('remote-exec over SSH (real sshd on 127.0.0.1:2222)', () => {
  it('streams stdin in and stdout back unchanged (5 MiB of binary data)', async () => {
    const data = randomBytes(5 * 1024 * 1024);
    const remote = await startRemoteCommand(target, { command: 'cat', args: [], signal: new AbortController().signal });
    const hash = createHash('sha256');
    const reading = pipeline(remote.stdout, hash);
    await pipeline(Readable.from([data]), remote.stdin);
    await reading;
    expect(await remote.exited).toBe(0);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('passes secrets through a 0600 file that is gone when the command runs, never through argv', async () => {
    const secret = `S3cret-${randomBytes(6).toString('hex')}`;
    const marker = `hf-marker-${randomBytes(4).toString('hex')}`;
    const remote = await startRemoteCommand(target, {
      command: 'sh',
      args: ['-c', `printf '%s' "$HF_SECRET"; ls /tmp | grep -c '^tmp\\.' >&2; sleep 1; : ${marker}`],
      secretEnv: { HF_SECRET: secret },
      signal: new AbortController().signal,
    });
    const chunks: Buffer[] = [];
    remote.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => setTimeout(resolve, 400));
    const lines = remoteProcesses(marker);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(secret);
    expect(await remote.exited).toBe(0);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(secret);
  });

  it('reports the exit code; a missing command exits 127 with the shell message', async () => {
    const failing = await startRemoteCommand(target, { command: 'sh', args: ['-c', 'echo oops >&2; exit 3'], signal: new AbortController().signal });
    failing.stdout.resume();
    expect(await failing.exited).toBe(3);
    expect(failing.stderrTail()).toBe('oops');
    const missing = await startRemoteCommand(target, { command: 'holdfast-no-such-tool', args: [], signal: new AbortController().signal });
    missing.stdout.resume();
    expect(await missing.exited).toBe(127);
    expect(missing.stderrTail()).toMatch(/holdfast-no-such-tool.*not found/);
  });

  it('aborting kills the remote process, not only the channel', async () => {
    const marker = `hf-abort-${randomBytes(4).toString('hex')}`;
    const controller = new AbortController();
    // `yes` never ends and blocks on the unread channel, like a dump tool on backpressure.
    const remote = await startRemoteCommand(target, { command: 'sh', args: ['-c', `yes ${marker}`], signal: controller.signal });
    for (let i = 0; i < 50 && remoteProcesses(marker).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(remoteProcesses(marker).length).toBeGreaterThan(0);
    controller.abort();
    await remote.exited;
    for (let i = 0; i < 40 && remoteProcesses(marker).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(remoteProcesses(marker)).toEqual([]);
  });

  it('refuses a host key that does not match the pin, and a wrong password, with AUTH and no secret', async () => {
    const pinned = await startRemoteCommand({ ...target, hostKeySha256: 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, { command: 'true', args: [], signal: new AbortController().signal }).catch(
      (e: unknown) => e,
    );
    expect(pinned).toBeInstanceOf(SshConnectError);
    expect((pinned as SshConnectError).reason).toBe('AUTH');
    expect((pinned as Error).message).toMatch(/^host key of 127\.0\.0\.1:2222 is SHA256:\S+, not the pinned SHA256:AAAA/);

    const wrong = `${password}-wrong`;
    const login = await startRemoteCommand({ ...target, privateKey: undefined, password: wrong }, { command: 'true', args: [], signal: new AbortController().signal }).catch(
      (e: unknown) => e,
    );
    expect((login as SshConnectError).reason).toBe('AUTH');
    expect((login as Error).message).not.toContain(wrong);
    expect(await fetchHostKeyFingerprint(target.host, target.port)).toBe(target.hostKeySha256);
  });

  it('an unreachable host is TRANSIENT', async () => {
    const error = await startRemoteCommand({ ...target, port: 1 }, { command: 'true', args: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect((error as SshConnectError).reason).toBe('TRANSIENT');
  });
});
