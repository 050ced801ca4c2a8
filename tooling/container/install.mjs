// The container tests need podman, runc, mmdebstrap and podman-compose (Debian packages). As root they are
// installed here; otherwise the test fails with one line saying what to install (nothing is skipped silently).
import { spawnSync } from 'node:child_process';

// iptables: podman's network stack (netavark) calls it for the compose test's bridge network ("netavark: No such file" without it).
const PACKAGES = ['podman', 'runc', 'mmdebstrap', 'podman-compose', 'netavark', 'aardvark-dns', 'iptables'];
const COMMANDS = ['podman', 'runc', 'mmdebstrap', 'podman-compose', 'iptables'];

const missing = () => COMMANDS.filter((command) => spawnSync('sh', ['-c', `command -v ${command}`]).status !== 0);

export function ensurePodman() {
  if (missing().length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`the container tests need ${missing().join(', ')}: run as root, or apt-get install -y ${PACKAGES.join(' ')}`);
  }
  const result = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-q', ...PACKAGES], { encoding: 'utf8' });
  const still = missing();
  if (still.length > 0) {
    throw new Error(`could not install ${still.join(', ')} with apt-get (exit ${result.status}): ${(result.stderr ?? '').trim().slice(-500)}`);
  }
}
