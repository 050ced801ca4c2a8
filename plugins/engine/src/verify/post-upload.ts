import type { BranchOutcome } from '../run/backup-pipeline.js';
import { messageOf } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import { checkStoredObject, type VerificationMethod } from './stored-object.js';

/** Result of the post-upload check of one destination, kept in the execution metadata and in its sidecar. */
export interface UploadVerification {
  configId: string;
  name: string;
  status: 'verified' | 'mismatch' | 'skipped';
  method?: VerificationMethod;
  verifiedAt?: string;
  problem?: string;
}

/**
 * Re-reads what each successful destination stored (or asks for its server-side checksum) and compares it with the
 * SHA-256 computed while uploading. A destination that stored other bytes keeps its copy (it is evidence, and the
 * integrity check will list it again) but the result says `mismatch` and the caller makes the run Partial.
 */
export async function verifyUploads(ctx: RunContext, outcomes: BranchOutcome[], key: string, sha256: string): Promise<UploadVerification[]> {
  const results: UploadVerification[] = [];
  for (const outcome of outcomes) {
    const { storage } = outcome;
    try {
      const check = await checkStoredObject(storage, key, { expectedSha256: sha256, preferServerChecksum: true, signal: ctx.signal });
      const result: UploadVerification = { configId: storage.configId, name: storage.name, status: check.ok ? 'verified' : 'mismatch', method: check.method, verifiedAt: new Date().toISOString() };
      if (check.ok) ctx.log.info(`destination ${storage.name}: verified (${check.method})`);
      else {
        result.problem = check.problem;
        ctx.log.error(`destination ${storage.name}: verification failed: ${check.problem}`);
      }
      results.push(result);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      const problem = `verification failed: ${messageOf(error)}`;
      ctx.log.error(`destination ${storage.name}: ${problem}`);
      results.push({ configId: storage.configId, name: storage.name, status: 'mismatch', problem });
    }
  }
  return results;
}
