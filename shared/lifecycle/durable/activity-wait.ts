// Waiting inside an activity instead of on durable timers. The Durable Task Scheduler bills every timer
// that fires and every activity's start and result, so a loop that polls ARM every 5 s through a timer
// and an activity costs three actions a poll; the same polls made inside one activity, sleeping between
// them, cost two actions for the whole wait. The wait is bounded (ACTIVITY_WAIT_WINDOW_SECONDS), so an
// activity stays far inside the Functions timeout (host.json `functionTimeout`, 5 minutes) even with
// its last requests each taking up to REQUEST_TIMEOUT_SECONDS, and its orchestration is heard from
// often enough that a monitor is never judged stuck while it waits (launchMonitorStuckAfterMs, at least
// 2 minutes). What it costs instead: the activity holds one of the host's activity slots
// (maxConcurrentActivityFunctions) while it sleeps, so a burst of waits scales the Durable group out
// rather than queueing its other work behind them.

/** The real time one waiting activity may spend sleeping between its polls. */
export const ACTIVITY_WAIT_WINDOW_SECONDS = 45;

/** How an activity sleeps and reads the time it has spent; a test passes one that only counts. */
export interface ActivityTimer {
  sleep(ms: number): Promise<void>;
  /** Milliseconds since the activity began. */
  elapsedMs(): number;
}

/** The process's monotonic clock: the window bounds real time, whatever the lifecycle's clock says. */
export function realActivityTimer(): ActivityTimer {
  const started = performance.now();
  return {
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
    elapsedMs: () => performance.now() - started,
  };
}
