// Runs podman the way this kind of machine needs (../shared/test-servers-containers.md): runc instead of crun
// (crun refuses the hybrid cgroup layout), cgroupfs, and no default ulimits (setrlimit is not permitted here).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

const CONF_DIR = '/etc/containers';
export const CONTAINERS_CONF = `${CONF_DIR}/holdfast-test.conf`;
export const PODMAN_FLAGS = ['--runtime', 'runc', '--cgroup-manager=cgroupfs'];

/** The environment every podman and podman-compose call gets. */
export function podmanEnv() {
  mkdirSync(CONF_DIR, { recursive: true });
  // netavark with aardvark-dns, named outright: podman 4.3 keeps using CNI on a machine where it first ran with CNI,
  // and Debian's CNI has no DNS plugin, so compose services could not find each other by name (ENOTFOUND postgres).
  writeFileSync(CONTAINERS_CONF, '[containers]\ndefault_ulimits = []\n\n[network]\nnetwork_backend = "netavark"\n');
  return { ...process.env, CONTAINERS_CONF };
}

/** Runs a command; throws with its stderr unless `allowFailure`. Returns { status, stdout, stderr }. */
export function run(command, args, { allowFailure = false, cwd, env, input, stdio } = {}) {
  const result = spawnSync(command, args, {
    cwd, env: env ?? podmanEnv(), input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio,
  });
  if (result.error) throw new Error(`${command} could not run: ${result.error.message}`);
  if (result.status !== 0 && !allowFailure) {
    throw new Error(`${command} ${args.slice(0, 3).join(' ')} exited ${result.status}: ${(result.stderr ?? '').trim().slice(-2000)}`);
  }
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

export function podman(args, options = {}) {
  return run('podman', [...PODMAN_FLAGS, ...args], options);
}
