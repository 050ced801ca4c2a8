/**
 * The scheduler's notion of time. Production uses the wall clock. Benchmarks and the scale-out test compress time:
 * with `HOLDFAST_SCHEDULER_TIME_SCALE=60` and a shared `HOLDFAST_SCHEDULER_TIME_ORIGIN`, scheduler time runs 60
 * times faster than the wall clock from that origin, so a day of cron slots fires in 24 minutes. Slots are recorded
 * in scheduler time (`executions.scheduled_for`); every other timestamp stays wall-clock time. Never set in
 * production: runs would fire far more often than their schedule says.
 */
export interface SchedulerClock {
  /** Scheduler time now (ms since the epoch). */
  now(): number;
  /** Wall-clock milliseconds until `schedulerMs` of scheduler time has passed. */
  realDelayMs(schedulerMs: number): number;
  /** Wall-clock time (ms) at which scheduler time reads `schedulerTime`. */
  toWallClock(schedulerTime: number): number;
  /** 1 for the wall clock. */
  readonly scale: number;
}

/** The wall clock (`Date.now`, so fake timers drive it in tests). */
export const WALL_CLOCK: SchedulerClock = {
  now: () => Date.now(),
  realDelayMs: (ms) => ms,
  toWallClock: (time) => time,
  scale: 1,
};

/** Scheduler time that runs `scale` times faster than the wall clock from `originMs` on (both times agree there). */
export function compressedClock(scale: number, originMs: number): SchedulerClock {
  return {
    now: () => originMs + (Date.now() - originMs) * scale,
    realDelayMs: (ms) => ms / scale,
    toWallClock: (time) => originMs + (time - originMs) / scale,
    scale,
  };
}

/** `HOLDFAST_SCHEDULER_TIME_SCALE` and `HOLDFAST_SCHEDULER_TIME_ORIGIN` (ISO time or epoch ms), checked. */
export function schedulerClockFrom(env: NodeJS.ProcessEnv): SchedulerClock {
  const rawScale = env.HOLDFAST_SCHEDULER_TIME_SCALE?.trim();
  if (!rawScale || rawScale === '1') return WALL_CLOCK;
  const scale = Number(rawScale);
  if (!Number.isFinite(scale) || scale < 1 || scale > 10_000) throw new Error(`HOLDFAST_SCHEDULER_TIME_SCALE must be a number from 1 to 10000 (got "${rawScale}")`);
  const rawOrigin = env.HOLDFAST_SCHEDULER_TIME_ORIGIN?.trim();
  // Every process must compress from the same instant, or their slots would not line up.
  if (!rawOrigin) throw new Error('HOLDFAST_SCHEDULER_TIME_ORIGIN is required with HOLDFAST_SCHEDULER_TIME_SCALE (the same ISO time on every process)');
  const origin = /^\d+$/.test(rawOrigin) ? Number(rawOrigin) : Date.parse(rawOrigin);
  if (!Number.isFinite(origin)) throw new Error(`HOLDFAST_SCHEDULER_TIME_ORIGIN must be an ISO time or epoch milliseconds (got "${rawOrigin}")`);
  return compressedClock(scale, origin);
}
