// Module hooks (registered with node:module's register) that append every resolved module URL to the file named in
// HOLDFAST_RESOLVED_LOG, one per line: lets a test see which packages a process loaded.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (process.env.HOLDFAST_RESOLVED_LOG) appendFileSync(process.env.HOLDFAST_RESOLVED_LOG, `${resolved.url}\n`);
  return resolved;
}
