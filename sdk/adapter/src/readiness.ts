import { AdapterError, type AdapterErrorOrigin, type PointInTimeReadiness } from '@holdfast/kernel/adapter';

/**
 * `PointInTimeSupport.readiness` from a source's test-connection check: its problems and warnings, nothing else. The
 * check keeps its own connect timeouts; `signal` only stops the waiting: it rejects with ABORTED at once (the check
 * runs on and its late answer is dropped), so a save is never held by a server that does not answer.
 */
export function readinessFrom(origin: AdapterErrorOrigin, check: () => Promise<PointInTimeReadiness>, signal: AbortSignal): Promise<PointInTimeReadiness> {
  const aborted = () => new AdapterError(origin, 'ABORTED', 'the point-in-time readiness check was stopped before the server answered');
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<PointInTimeReadiness>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    check()
      .then(({ problems, warnings }) => resolve({ problems, warnings }), reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}
