// Events the lifecycle writes from passes that repeat every few seconds (a drain, a disruption pass) would
// say the same thing on every pass; upstream's recorder drops a repeat of the same reason on the same
// object within a window. Each such writer (the disruption's blocked events, termination's drain events)
// keeps one memory per process made here, beside the recorder it writes through (events.ts), bounded so
// a long-lived host cannot grow it without end: past its size the entry sent longest ago is forgotten
// first.
export interface EventDedupe {
  /** True (and remembered) when `key` was not sent within the last `windowMs`. */
  firstInWindow(key: string, now: number, windowMs: number): boolean;
  /** Forgets what was sent (tests that count events start from a clean slate). */
  reset(): void;
}

export function createEventDedupe(remembered = 10_000): EventDedupe {
  const lastSent = new Map<string, number>();
  return {
    firstInWindow(key, now, windowMs) {
      const last = lastSent.get(key);
      if (last !== undefined && now - last < windowMs) return false;
      // Re-inserted, so the Map's order stays the order of sending and its first key the oldest.
      lastSent.delete(key);
      lastSent.set(key, now);
      if (lastSent.size > remembered) {
        const oldest = lastSent.keys().next();
        if (!oldest.done) lastSent.delete(oldest.value);
      }
      return true;
    },
    reset() {
      lastSent.clear();
    },
  };
}
