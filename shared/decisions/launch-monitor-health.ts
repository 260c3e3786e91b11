// Whether a launch monitor can still be trusted to write its NodeClaim's launch outcome. Pure: the
// monitor's orchestration status (or its absence) and the time are plain data.

/** What the orchestration client reports about an instance (Durable Functions' runtime status names). */
export interface MonitorStatus {
  runtimeStatus: string;
  createdTime?: Date;
  lastUpdatedTime?: Date;
}

export type LaunchMonitorHealth =
  /** Running and making progress: leave it alone. */
  | { state: 'healthy' }
  /** No instance (never started, or purged): start one. */
  | { state: 'missing' }
  /** Finished (Failed, Terminated, or Completed without the outcome reaching the NodeClaim): purge, start anew. */
  | { state: 'ended'; runtimeStatus: string }
  /** Running but silent for longer than any poll interval allows: stop it, then start anew. */
  | { state: 'stuck'; silentForMs: number };

const activeStatuses = new Set(['Pending', 'Running', 'ContinuedAsNew', 'Suspended']);

/**
 * A monitor wakes at least every `maxPollIntervalSeconds` (Retry-After may stretch one wait), so one
 * silent for `stuckAfterMs` lost its timer or its activity; the caller chooses a multiple of that interval.
 */
export function launchMonitorHealth(
  status: MonitorStatus | undefined,
  now: Date,
  stuckAfterMs: number,
): LaunchMonitorHealth {
  if (!status) return { state: 'missing' };
  if (!activeStatuses.has(status.runtimeStatus))
    return { state: 'ended', runtimeStatus: status.runtimeStatus };
  const last = (status.lastUpdatedTime ?? status.createdTime)?.getTime();
  if (last === undefined || !Number.isFinite(last)) return { state: 'healthy' };
  const silentForMs = now.getTime() - last;
  return silentForMs > stuckAfterMs ? { state: 'stuck', silentForMs } : { state: 'healthy' };
}

/** How long a monitor may stay silent: three of its longest intervals, and never under two minutes. */
export function launchMonitorStuckAfterMs(maxPollIntervalSeconds: number): number {
  return Math.max(3 * maxPollIntervalSeconds * 1000, 120_000);
}
