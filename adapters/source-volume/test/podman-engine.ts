import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real container engine for the volume source: podman's Docker-compatible API (`podman system service` on a unix
 * socket in a temp folder), started and stopped by the test. Podman and its settings for this kind of machine come
 * from the test-service launcher (tooling/test-services/podman.mjs), which `npm test` runs first.
 */
interface PodmanLauncher {
  PODMAN_FLAGS: string[];
  podmanEnv(): NodeJS.ProcessEnv;
}
const launcherPath = fileURLToPath(new URL('../../../tooling/test-services/podman.mjs', import.meta.url));
const launcher = (await import(launcherPath)) as PodmanLauncher;

/** Why podman cannot run here, or undefined when it can. Said in the skipped test's name, never silently. */
export function podmanUnavailable(): string | undefined {
  if (spawnSync('sh', ['-c', 'command -v podman']).status !== 0) {
    return 'podman is not installed (npm run test:services installs it as root: apt-get install podman runc iptables)';
  }
  if (process.getuid?.() !== 0) return 'not running as root (the podman settings of this machine need root)';
  return undefined;
}

/** Runs podman with this machine's flags; throws with its stderr on failure. */
export function podman(args: string[]): string {
  const result = spawnSync('podman', [...launcher.PODMAN_FLAGS, ...args], { env: launcher.podmanEnv(), encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`podman ${args.slice(0, 2).join(' ')} exited ${result.status}: ${result.stderr.trim().slice(-1000)}`);
  return result.stdout.trim();
}

export interface PodmanService {
  /** `unix:///...sock`, the adapter's dockerHost. */
  dockerHost: string;
  version: string;
  stop(): Promise<void>;
}

/** Starts `podman system service` on a fresh socket and waits until `GET /version` answers. */
export async function startPodmanService(): Promise<PodmanService> {
  const dir = mkdtempSync(join(tmpdir(), 'holdfast-podman-'));
  const socket = join(dir, 'podman.sock');
  const child = spawn('podman', [...launcher.PODMAN_FLAGS, 'system', 'service', '--time=0', `unix://${socket}`], {
    env: launcher.podmanEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const probe = spawnSync('curl', ['-sf', '--unix-socket', socket, 'http://d/v1.41/version'], { encoding: 'utf8' });
    if (probe.status === 0) return { dockerHost: `unix://${socket}`, version: (JSON.parse(probe.stdout) as { Version: string }).Version, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`podman system service did not answer on ${socket}: ${stderr.trim() || `exit ${child.exitCode}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A tiny local image, no registry needed: the machine's own `sh` (dash) and `sleep` with the C library they load,
 * imported with `podman import` (about 2 MB, 2 s, once per machine: the tag names the binaries' digest). It is the
 * adapter's helper image (created, never started) and runs the container that uses the volume.
 */
export function tinyImage(): string {
  const files = ['/bin/sh', '/bin/sleep'];
  const libraries = spawnSync('ldd', files.map((file) => realpathSync(file)), { encoding: 'utf8' })
    .stdout.split('\n')
    .map((line) => /(\/\S+) \(0x/.exec(line)?.[1])
    .filter((path): path is string => Boolean(path));
  const contents = [...files, ...new Set(libraries)];
  const digest = createHash('sha256');
  for (const file of contents) digest.update(file).update(readFileSync(file));
  const image = `localhost/holdfast-volume-test:${digest.digest('hex').slice(0, 12)}`;
  if (spawnSync('podman', [...launcher.PODMAN_FLAGS, 'image', 'exists', image], { env: launcher.podmanEnv() }).status === 0) return image;
  const root = mkdtempSync(join(tmpdir(), 'holdfast-tiny-'));
  try {
    for (const file of contents) {
      mkdirSync(join(root, dirname(file)), { recursive: true });
      copyFileSync(file, join(root, file));
    }
    mkdirSync(join(root, 'tmp'));
    const tarball = `${root}.tar`;
    const tar = spawnSync('tar', ['-C', root, '-cf', tarball, '.']);
    if (tar.status !== 0) throw new Error(`tar of the tiny image failed: ${String(tar.stderr)}`);
    podman(['import', '--change', 'CMD ["/bin/sh"]', tarball, image]);
    rmSync(tarball, { force: true });
    return image;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Host folder of a podman volume (root's storage: /var/lib/containers/storage/volumes/<name>/_data). */
export const volumeFolder = (volume: string) => podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', volume]);

/** State and start time of a container, as podman reports them. */
export function containerState(name: string): { status: string; startedAt: string } {
  const [status, startedAt] = podman(['inspect', '--format', '{{.State.Status}}|{{.State.StartedAt}}', name]).split('|');
  return { status: status!, startedAt: startedAt! };
}
