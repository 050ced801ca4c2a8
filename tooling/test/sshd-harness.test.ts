// The repository's sshd helper (tooling/harness/sshd.mjs), which the SSH-mode tests of the source adapters use. It
// runs here without the test sshd: the state file is a temporary one, and the process helper looks at this
// machine's real processes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { remoteToolProcesses, SSHD_STATE_FILE, sshdState } from '../harness/sshd.mjs';

const dir = await mkdtemp(join(tmpdir(), 'holdfast-harness-sshd-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('sshdState', () => {
  it('reads the launcher state file (by default the one tooling/test-services/sshd.mjs writes)', async () => {
    expect(SSHD_STATE_FILE).toBe('/tmp/holdfast-test-services/sshd/sshd.json');
    const state = { host: '127.0.0.1', port: 2222, user: 'sshtest', password: 'pw', keyPath: '/k', hostKeySha256: 'SHA256:x', home: '/home/sshtest' };
    const file = join(dir, 'sshd.json');
    await writeFile(file, JSON.stringify(state));
    expect(sshdState(file)).toEqual(state);
  });

  it('says the test sshd is not running when the state file is missing', () => {
    expect(() => sshdState(join(dir, 'missing.json'))).toThrow(/^the test sshd is not running \(tooling\/test-services\/sshd\.mjs\): ENOENT/);
  });
});

describe('remoteToolProcesses', () => {
  it('finds a command among one user\'s processes while it runs', async () => {
    const marker = `hf-marker-${randomBytes(4).toString('hex')}`;
    const child = spawn('sh', ['-c', `sleep 30; : ${marker}`], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 5_000;
      while (remoteToolProcesses(userInfo().username, marker).length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(remoteToolProcesses(userInfo().username, marker)).toHaveLength(1);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(remoteToolProcesses(userInfo().username, marker)).toEqual([]);
  });
});
