// The host's notion of time. Timer schedules and durable timers run on a Clock so tests can run hours of
// schedule in seconds (a scaled clock) without the handlers knowing.

export interface Clock {
  /** Milliseconds since the Unix epoch on this clock. */
  now(): number;
  /**
   * Calls `callback` once this clock reaches `at` (ms since epoch). Returns a function that cancels it.
   * `purpose` says what the host waits for (a test that watches durable timers tells them from the
   * queues' polls); the clock itself treats every timer alike.
   */
  setTimer(at: number, callback: () => void, purpose?: TimerPurpose): () => void;
}

/** What a host timer is for: a durable timer, a timer trigger's schedule, or a Durable queue's next poll. */
export type TimerPurpose = 'durable-timer' | 'schedule' | 'queue-poll';

/** Node's setTimeout cannot wait longer than this; longer waits re-arm. */
const maxTimeoutMs = 2_147_483_647;

export const systemClock: Clock = createScaledClock(1);

/**
 * A clock that runs `factor` times faster than real time, starting at `start` (default: now).
 * factor 60 turns a one-minute schedule into one real second.
 */
export function createScaledClock(factor: number, options: { start?: Date } = {}): Clock {
  if (!(factor > 0) || !Number.isFinite(factor))
    throw new Error(`clock factor must be positive, got ${factor}`);
  const realStart = Date.now();
  const clockStart = options.start?.getTime() ?? realStart;
  const now = (): number => clockStart + (Date.now() - realStart) * factor;

  const setTimer = (at: number, callback: () => void): (() => void) => {
    let handle: NodeJS.Timeout | undefined;
    let cancelled = false;
    // Always asynchronous, even when `at` has passed, so callers never re-enter themselves.
    const delayUntil = (): number => Math.min(Math.max(0, Math.ceil((at - now()) / factor)), maxTimeoutMs);
    const wake = (): void => {
      if (cancelled) return;
      if (at - now() <= 0) {
        handle = undefined;
        callback();
        return;
      }
      handle = setTimeout(wake, delayUntil());
    };
    handle = setTimeout(wake, delayUntil());
    return () => {
      cancelled = true;
      if (handle !== undefined) clearTimeout(handle);
    };
  };

  return { now, setTimer };
}
