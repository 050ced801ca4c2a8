// Runs argv[2..] as a child with inherited stdio and exits with its code, so spawnNode can collect the output of a
// wrapped command (`ip netns exec <ns> node holdfast.mjs agent ...`). SIGKILL of this process does not reach the
// child: tests that kill an agent this way kill the child by its pid (printed first, as a JSON line).
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: 'inherit' });
process.stdout.write(`${JSON.stringify({ msg: 'wrapped child', pid: child.pid })}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
