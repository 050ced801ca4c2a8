// Summarises V8 CPU profiles (`node --cpu-prof`): self time per function, largest first, and the share of the
// profile that was idle. Usage: node tooling/bench/profile-summary.mjs <file.cpuprofile>... [--top 25]
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex === -1 ? 25 : Number(args[topIndex + 1]);
const files = args.filter((arg, index) => arg !== '--top' && index !== topIndex + 1);
if (files.length === 0) {
  console.error('usage: profile-summary.mjs <file.cpuprofile>... [--top N]');
  process.exit(2);
}

for (const file of files) {
  const profile = JSON.parse(await readFile(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Sample intervals: timeDeltas[i] is the time before sample i.
  const selfMicros = new Map();
  profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);
  const byFunction = new Map();
  for (const [id, micros] of selfMicros) {
    const { callFrame } = byId.get(id);
    const where = callFrame.url ? `${relative(process.cwd(), callFrame.url.replace(/^file:\/\//, ''))}:${callFrame.lineNumber + 1}` : '';
    const key = `${callFrame.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
  }
  const rows = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(`\n${file}: ${(total / 1e6).toFixed(2)} s sampled`);
  for (const [name, micros] of rows) console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${(micros / 1e6).toFixed(2).padStart(6)} s  ${name}`);
}
