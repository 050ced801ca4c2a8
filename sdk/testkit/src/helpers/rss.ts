/** Figures of an {@link RssSampler} run, in bytes. */
export interface RssReport {
  baseline: number;
  peak: number;
  /** `peak - baseline`: how much resident memory the measured work added at most. */
  growth: number;
  samples: number;
}

/** Samples the process resident set size while work runs. */
export interface RssSampler {
  stop(): RssReport;
}

/**
 * Starts sampling `process.memoryUsage.rss()` every `intervalMs`. Sampling on a timer only works while the event
 * loop turns, which is the case for streamed I/O; call `stop()` when the work is done.
 */
export function startRssSampler(intervalMs = 25): RssSampler {
  // A full GC first (when exposed) keeps earlier garbage out of the baseline.
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  let samples = 1;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    samples++;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      samples++;
      return { baseline, peak, growth: peak - baseline, samples };
    },
  };
}
