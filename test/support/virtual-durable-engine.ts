// The local host's durable engine (orchestration-runtime.ts, durable-functions' own replay) over an
// in-memory history store and a virtual clock that jumps to the next durable timer whenever nothing else
// is in flight, so hours of a polling workflow replay in seconds and every episode sees the time its timer
// was due. The store records how long each instance's history grew, which is what bounded-history tests
// measure. Nothing external is started.
import type { Clock } from '../../local/host/clock.js';
import { createEventBus, type HostEvent } from '../../local/host/events.js';
import { createMemoryHistoryStore, type HistoryStore } from '../../local/host/history-store.js';
import type { InstanceRecord } from '../../local/host/history.js';
import type { DurableWorkSnapshot } from '../../local/host/durable-work.js';
import { createOrchestrationRuntime } from '../../local/host/orchestration-runtime.js';
import { createWorkTracker } from '../../local/host/work-tracker.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type {
  ActivityFunctionDefinition,
  FunctionDefinition,
  OrchestrationClient,
  OrchestrationFunctionDefinition,
} from '../../shared/runtime/definitions.js';

export interface VirtualClock extends Clock {
  /** Moves time to the earliest pending timer and fires it; false when none is pending. */
  fireNext(): boolean;
  /** When the earliest pending timer is due; undefined when none is. */
  nextDue(): number | undefined;
}

export function createVirtualClock(start: Date): VirtualClock {
  let now = start.getTime();
  let sequence = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  const earliest = (): [number, { at: number; callback: () => void }] | undefined => {
    let found: [number, { at: number; callback: () => void }] | undefined;
    for (const entry of pending) if (!found || entry[1].at < found[1].at) found = entry;
    return found;
  };
  return {
    now: () => now,
    setTimer: (at, callback) => {
      const id = (sequence += 1);
      pending.set(id, { at, callback });
      return () => pending.delete(id);
    },
    nextDue: () => earliest()?.[1].at,
    fireNext: () => {
      const next = earliest();
      if (!next) return false;
      pending.delete(next[0]);
      now = Math.max(now, next[1].at);
      next[1].callback();
      return true;
    },
  };
}

export interface VirtualDurableEngine {
  client: OrchestrationClient;
  clock: VirtualClock;
  /** Every host event so far, in order. */
  events: HostEvent[];
  /** The longest history each instance held when saved (one execution's, since continuation truncates). */
  longestHistory: Map<string, number>;
  /** The instance's record as stored now. */
  record(instanceId: string): Promise<InstanceRecord | undefined>;
  /** The engine's work so far (billable actions, episodes, timers), per orchestration. */
  durableWork(): DurableWorkSnapshot;
  /** Runs episodes, activities and timers until nothing is left before `until` (ms since epoch). */
  runUntil(until: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startVirtualDurableEngine(
  definitions: readonly FunctionDefinition[],
  start: Date,
): Promise<VirtualDurableEngine> {
  const clock = createVirtualClock(start);
  const memory = createMemoryHistoryStore();
  const longestHistory = new Map<string, number>();
  const store: HistoryStore = {
    ...memory,
    save: (record) => {
      const longest = longestHistory.get(record.instanceId) ?? 0;
      longestHistory.set(record.instanceId, Math.max(longest, record.history.length));
      return memory.save(record);
    },
  };
  const bus = createEventBus();
  const events: HostEvent[] = [];
  bus.on((event) => events.push(event));
  const work = createWorkTracker();
  const runtime = createOrchestrationRuntime({
    orchestrations: definitions.filter(
      (d): d is OrchestrationFunctionDefinition => d.kind === 'orchestration',
    ),
    activities: definitions.filter((d): d is ActivityFunctionDefinition => d.kind === 'activity'),
    store,
    clock,
    log: silentLogger,
    events: bus,
    work,
    maxConcurrentActivities: 4,
    // Workflow decisions here are pinned to the times their timers were due; the queues' poll waits
    // (host.json's maxQueuePollingInterval) are the local host's, tested with it.
    polling: 'immediate',
    contextFor: (functionName, invocationId) => ({
      functionName,
      invocationId,
      log: silentLogger,
      orchestrations: runtime.client,
    }),
  });
  await runtime.start();
  /** Waits until no episode or activity is in flight, including work a finished one queued. */
  const settle = async (): Promise<void> => {
    for (;;) {
      await work.drained();
      const started = work.started;
      await new Promise((resolve) => setImmediate(resolve));
      if (work.busy === 0 && work.started === started) return;
    }
  };
  return {
    client: runtime.client,
    clock,
    events,
    longestHistory,
    record: (instanceId) => memory.load(instanceId),
    durableWork: () => runtime.durableWork.snapshot(),
    runUntil: async (until) => {
      for (;;) {
        await settle();
        const due = clock.nextDue();
        if (due === undefined || due > until) return;
        clock.fireNext();
      }
    },
    stop: () => runtime.stop(),
  };
}
