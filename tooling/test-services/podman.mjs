// Podman, the real container engine of the tests: the volume source's Docker-compatible API suite
// (adapters/source-volume/test/podman-engine.test.ts) and the container image tests (tooling/container/). Installs
// Debian's podman, runc and iptables when missing (a few seconds' download) and writes the engine settings this
// kind of machine needs (../shared/test-servers-containers.md): runc instead of crun (crun refuses the hybrid cgroup
// layout), cgroupfs, no default ulimits (setrlimit is not permitted here); iptables because podman's network stack
// (netavark) calls it for every bridge network. Usable as `ensurePodman()` from ensure.mjs or `node podman.mjs`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { aptInstall } from './mariadb.mjs';

export const CONTAINERS_CONF = '/etc/containers/holdfast-test.conf';
/** Flags every podman call gets (the service started by the volume tests too). */
export const PODMAN_FLAGS = ['--runtime', 'runc', '--cgroup-manager=cgroupfs'];
const PACKAGES = ['podman', 'runc', 'iptables'];
const COMMANDS = ['podman', 'runc', 'iptables'];

const missing = () => COMMANDS.filter((command) => spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0);

/** Writes the engine settings and returns the environment every podman call gets. */
export function podmanEnv() {
  mkdirSync('/etc/containers', { recursive: true });
  writeFileSync(CONTAINERS_CONF, '[containers]\ndefault_ulimits = []\n');
  return { ...process.env, CONTAINERS_CONF };
}

/** Makes sure podman runs a container here; resolves its version. */
export async function ensurePodman() {
  let state = 'already installed';
  if (missing().length > 0) {
    if (process.getuid?.() !== 0) throw new Error(`${missing().join(', ')} missing: run as root, or apt-get install -y ${PACKAGES.join(' ')}`);
    aptInstall(PACKAGES);
    if (missing().length > 0) throw new Error(`${missing().join(', ')} still missing after apt-get install ${PACKAGES.join(' ')}`);
    state = 'installed';
  }
  const version = spawnSync('podman', [...PODMAN_FLAGS, 'version', '--format', '{{.Client.Version}}'], { env: podmanEnv(), encoding: 'utf8' });
  if (version.status !== 0) throw new Error(`podman does not run: ${(version.stderr ?? '').trim().slice(-300)}`);
  return `${state} (podman ${version.stdout.trim()})`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensurePodman().then(
    (state) => process.stdout.write(`podman ${state}\n`),
    (error) => {
      process.stderr.write(`podman: ${error.message}\n`);
      process.exit(1);
    },
  );
}
