// The host's activity slots, like host.json's durableTask.maxConcurrentActivityFunctions, and what they
// were used for. Some activities wait inside themselves (up to ACTIVITY_WAIT_WINDOW_SECONDS) instead of
// on durable timers, which saves Durable actions but holds a slot while they sleep: under a burst the
// slots may all be held and every other activity queue behind the waits. The figures say whether that
// happened and what it cost: the most slots in use at once, how long a work item waited for a slot,
// the slot-seconds each activity held and how long every slot was taken. The slots and their queue live
// here, so the accounting cannot drift from what the runtime actually did.

/** A work item's wait for a free slot (0 when one was free as it arrived), over the items that ran. */
export interface SlotWait {
  p50Ms: number;
  p99Ms: number;
  /** Exact. */
  maxMs: number;
}

export interface ActivitySlotUse {
  /** Work items that took a slot. */
  executions: number;
  /** Of those, the ones that found every slot taken and queued for one. */
  queued: number;
  /** The most slots held at once (by this activity, or by all). */
  peakInUse: number;
  /**
   * Time slots were held, summed, in seconds (those held at the snapshot up to then): an activity's
   * execution and the recording of its result, after which its slot is free.
   */
  slotSeconds: number;
  waitForSlot: SlotWait;
}

export interface ActivitySlotsSnapshot {
  /** When the snapshot was taken, on the host's clock (ms since epoch). */
  at: number;
  /** maxConcurrentActivityFunctions. */
  capacity: number;
  inUse: number;
  /** Work items waiting for a slot now. */
  waiting: number;
  /** Seconds during which every slot was in use (up to the snapshot). */
  allInUseSeconds: number;
  total: ActivitySlotUse;
  /** Keyed by the activity function's name. */
  byActivity: Record<string, ActivitySlotUse>;
}

export interface ActivitySlots {
  /**
   * `start` runs as soon as a slot is free (now, or when one is released) and gets the function that
   * frees it; `abandon` runs instead if the host stops first.
   */
  request(activity: string, start: (release: () => void) => void, abandon: () => void): void;
  /** The host stops: every queued work item is abandoned (a restarted host finds it in the history). */
  abandonQueued(): void;
  snapshot(): ActivitySlotsSnapshot;
}

/**
 * Waits are counted in a bounded histogram: to the millisecond below EXACT_BELOW_MS, and above in
 * SUB_BUCKETS buckets per power of two, so a percentile is reported at most 1/SUB_BUCKETS (3%) above
 * the true value (never above the exact maximum), and a run of any length keeps at most a few hundred
 * buckets per activity. A histogram, unlike a sample, adds up across activities exactly.
 */
const EXACT_BELOW_MS = 64;
const SUB_BUCKETS = 32;

/** The bucket a wait falls in, named by its upper bound in whole milliseconds. */
export function waitBucketOf(waitMs: number): number {
  const ms = Math.max(0, Math.ceil(waitMs));
  if (ms < EXACT_BELOW_MS) return ms;
  const width = 2 ** Math.floor(Math.log2(ms)) / SUB_BUCKETS;
  return Math.ceil(ms / width) * width;
}

interface Tally {
  executions: number;
  queued: number;
  inUse: number;
  peakInUse: number;
  /** Of the slots released; those still held are added at the snapshot. */
  releasedHeldMs: number;
  maxWaitMs: number;
  /** Bucket (its upper bound, ms) → work items. */
  waits: Map<number, number>;
}

const newTally = (): Tally => ({
  executions: 0,
  queued: 0,
  inUse: 0,
  peakInUse: 0,
  releasedHeldMs: 0,
  maxWaitMs: 0,
  waits: new Map(),
});

export function createActivitySlots(options: { capacity: number; now: () => number }): ActivitySlots {
  const { capacity, now } = options;
  if (!(capacity >= 1)) throw new Error(`activity slots need a capacity of at least 1, got ${capacity}`);
  const total = newTally();
  const byActivity = new Map<string, Tally>();
  /** Work items waiting for a slot, oldest first. */
  const queue: {
    activity: string;
    queuedAt: number;
    start: (release: () => void) => void;
    abandon: () => void;
  }[] = [];
  /** The slots held now (at most `capacity`): when each was taken, for the time held so far. */
  const held = new Map<number, { activity: string; since: number }>();
  let nextHold = 0;
  let allInUseMs = 0;
  let allInUseSince: number | undefined;

  const tallyOf = (activity: string): Tally => {
    let tally = byActivity.get(activity);
    if (tally === undefined) {
      tally = newTally();
      byActivity.set(activity, tally);
    }
    return tally;
  };

  /** `queuedAt`: when the work item queued for a slot; undefined when one was free as it arrived. */
  const take = (
    activity: string,
    queuedAt: number | undefined,
    start: (release: () => void) => void,
  ): void => {
    const at = now();
    const waitMs = queuedAt === undefined ? 0 : Math.max(0, at - queuedAt);
    const tally = tallyOf(activity);
    for (const t of [total, tally]) {
      t.executions += 1;
      if (queuedAt !== undefined) t.queued += 1;
      t.inUse += 1;
      t.peakInUse = Math.max(t.peakInUse, t.inUse);
      t.maxWaitMs = Math.max(t.maxWaitMs, waitMs);
      const bucket = waitBucketOf(waitMs);
      t.waits.set(bucket, (t.waits.get(bucket) ?? 0) + 1);
    }
    if (total.inUse === capacity) allInUseSince = at;
    const hold = nextHold++;
    held.set(hold, { activity, since: at });
    let released = false;
    start(() => {
      if (released) return;
      released = true;
      const freedAt = now();
      held.delete(hold);
      for (const t of [total, tally]) {
        t.inUse -= 1;
        t.releasedHeldMs += freedAt - at;
      }
      if (allInUseSince !== undefined) {
        allInUseMs += freedAt - allInUseSince;
        allInUseSince = undefined;
      }
      const next = queue.shift();
      if (next !== undefined) take(next.activity, next.queuedAt, next.start);
    });
  };

  return {
    request: (activity, start, abandon) => {
      if (total.inUse < capacity && queue.length === 0) take(activity, undefined, start);
      else queue.push({ activity, queuedAt: now(), start, abandon });
    },
    abandonQueued: () => {
      for (const waiting of queue.splice(0)) waiting.abandon();
    },
    snapshot: () => {
      const at = now();
      const stillHeldMs = (activity?: string): number =>
        [...held.values()]
          .filter((hold) => activity === undefined || hold.activity === activity)
          .reduce((sum, hold) => sum + (at - hold.since), 0);
      return {
        at,
        capacity,
        inUse: total.inUse,
        waiting: queue.length,
        allInUseSeconds: (allInUseMs + (allInUseSince === undefined ? 0 : at - allInUseSince)) / 1000,
        total: useOf(total, stillHeldMs()),
        byActivity: Object.fromEntries(
          [...byActivity]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([activity, tally]) => [activity, useOf(tally, stillHeldMs(activity))]),
        ),
      };
    },
  };
}

function useOf(tally: Tally, stillHeldMs: number): ActivitySlotUse {
  return {
    executions: tally.executions,
    queued: tally.queued,
    peakInUse: tally.peakInUse,
    slotSeconds: (tally.releasedHeldMs + stillHeldMs) / 1000,
    waitForSlot: {
      p50Ms: percentileOf(tally.waits, tally.executions, 50, tally.maxWaitMs),
      p99Ms: percentileOf(tally.waits, tally.executions, 99, tally.maxWaitMs),
      maxMs: tally.maxWaitMs,
    },
  };
}

/** The nearest-rank percentile of the histogram's waits: its bucket's upper bound, capped at the maximum. */
function percentileOf(waits: ReadonlyMap<number, number>, count: number, p: number, maxMs: number): number {
  if (count === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * count));
  let seen = 0;
  for (const [bucket, items] of [...waits].sort(([a], [b]) => a - b)) {
    seen += items;
    if (seen >= rank) return Math.min(bucket, maxMs);
  }
  return maxMs;
}
