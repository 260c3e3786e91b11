// The local host's count of Durable work: small orchestrators run through the host's own orchestration
// runtime (durable-functions' replay over an in-memory history, on a virtual clock), and every figure the
// snapshot gives is checked against what those orchestrators did, action by action, as the Durable Task
// Scheduler bills them; and the use of its activity slots, through activities that hold theirs.
import type { OrchestrationContext } from 'durable-functions';
import { describe, expect, test } from 'vitest';
import { createDurableWorkRecorder, mergeDurableWork } from '../../local/host/durable-work.js';
import { createEventBus } from '../../local/host/events.js';
import { createMemoryHistoryStore, type HistoryStore } from '../../local/host/history-store.js';
import {
  createOrchestrationRuntime,
  type OrchestrationRuntime,
} from '../../local/host/orchestration-runtime.js';
import { createWorkTracker } from '../../local/host/work-tracker.js';
import { silentLogger } from '../../shared/observability/logger.js';
import {
  activity,
  orchestration,
  type FunctionDefinition,
  type OrchestrationFunctionDefinition,
  type ActivityFunctionDefinition,
} from '../../shared/runtime/definitions.js';
import { createVirtualClock, type VirtualClock } from '../support/virtual-durable-engine.js';

const START = new Date('2026-01-01T00:00:00Z');

/** What lets each running 'hold' activity finish, oldest first. */
const holds: (() => void)[] = [];

const definitions: FunctionDefinition[] = [
  activity('echo', (input: number) => Promise.resolve(input)),
  // Holds its slot until the test lets it go, as an activity that waits inside itself does.
  activity('hold', () => new Promise<void>((resolve) => holds.push(resolve))),
  orchestration('holder', function* (context: OrchestrationContext) {
    yield context.df.callActivity('hold');
    return 'held';
  }),
  // An activity, a 5 s timer, an external event, a sub-orchestration, then done.
  orchestration('parent', function* (context: OrchestrationContext) {
    yield context.df.callActivity('echo', 1);
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 5_000));
    yield context.df.waitForExternalEvent('go');
    yield context.df.callSubOrchestrator('child', 2, 'child-1');
    return 'done';
  }),
  orchestration('child', function* (context: OrchestrationContext) {
    return (yield context.df.callActivity('echo', context.df.getInput())) as unknown;
  }),
  // Three executions of one timer each, chained by continue-as-new.
  orchestration('looper', function* (context: OrchestrationContext) {
    const round = context.df.getInput<number>();
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 1_000));
    if (round < 2) {
      context.df.continueAsNew(round + 1);
      return undefined;
    }
    return round;
  }),
  orchestration('waiter', function* (context: OrchestrationContext) {
    yield context.df.waitForExternalEvent('never');
  }),
];

interface Engine {
  runtime: OrchestrationRuntime;
  store: HistoryStore;
  clock: VirtualClock;
  /** Runs episodes, activities and timers until nothing is left. */
  settle(): Promise<void>;
}

async function startEngine(): Promise<Engine> {
  const clock = createVirtualClock(START);
  const work = createWorkTracker();
  const store = createMemoryHistoryStore();
  const runtime = createOrchestrationRuntime({
    orchestrations: definitions.filter(
      (d): d is OrchestrationFunctionDefinition => d.kind === 'orchestration',
    ),
    activities: definitions.filter((d): d is ActivityFunctionDefinition => d.kind === 'activity'),
    store,
    clock,
    log: silentLogger,
    events: createEventBus(),
    work,
    maxConcurrentActivities: 4,
    polling: 'immediate',
    contextFor: (functionName, invocationId) => ({
      functionName,
      invocationId,
      log: silentLogger,
      orchestrations: runtime.client,
    }),
  });
  await runtime.start();
  const drained = async (): Promise<void> => {
    for (;;) {
      await work.drained();
      const started = work.started;
      await new Promise((resolve) => setImmediate(resolve));
      if (work.busy === 0 && work.started === started) return;
    }
  };
  return {
    runtime,
    store,
    clock,
    settle: async () => {
      for (;;) {
        await drained();
        if (!clock.fireNext()) return;
      }
    },
  };
}

describe('the local host counts Durable work', () => {
  test('each action of an orchestration with an activity, a timer, an event and a sub-orchestration', async () => {
    const { runtime, settle } = await startEngine();
    await runtime.client.startNew('parent', { instanceId: 'parent-1' });
    await settle();
    // Waiting for 'go' now: the start, the activity (2) and the timer's completion so far.
    expect(runtime.durableWork.snapshot().byOrchestration.parent?.actions).toBe(4);
    await runtime.client.raiseEvent('parent-1', 'go', true);
    await settle();
    expect((await runtime.client.getStatus('parent-1'))?.runtimeStatus).toBe('Completed');

    const snapshot = runtime.durableWork.snapshot();
    const parent = snapshot.byOrchestration.parent;
    const child = snapshot.byOrchestration.child;
    expect(parent?.actionsByKind).toEqual({
      orchestrationStarts: 1,
      activityStarts: 1,
      activityResults: 1,
      timerCompletions: 1,
      externalEvents: 1,
      subOrchestrationResults: 1,
      terminations: 0,
    });
    expect(parent?.actions).toBe(6);
    // The child's start is an action of the child's; its activity is two.
    expect(child?.actionsByKind.orchestrationStarts).toBe(1);
    expect(child?.actions).toBe(3);
    expect(snapshot.total.actions).toBe(9);
    // One replay per dispatched message to an orchestration: start, result, timer, event, child's result.
    expect(parent?.episodes).toBe(5);
    expect(child?.episodes).toBe(2);
    expect(parent?.activityExecutions).toBe(1);
    expect(parent?.timersCreated).toBe(1);
    expect(parent?.timersFired).toBe(1);
    expect(parent?.externalEventsRaised).toBe(1);
    expect(parent?.continuedAsNew).toBe(0);
  });

  test('history events appended and history bytes match the stored history', async () => {
    const { runtime, store, settle } = await startEngine();
    await runtime.client.startNew('child', { instanceId: 'child-only', input: 7 });
    await settle();
    const child = runtime.durableWork.snapshot().byOrchestration.child;
    // Episode 1: OrchestratorStarted, ExecutionStarted, TaskScheduled, OrchestratorCompleted.
    // Episode 2: OrchestratorStarted, TaskCompleted, OrchestratorCompleted (the completion).
    expect(child?.historyEventsAppended).toBe(7);
    const stored = await storedHistoryBytes(store, 'child-only');
    expect(child?.historyBytes.current).toBe(stored);
    expect(child?.historyBytes.peakInstance).toBe(stored);
    expect(child?.historyBytes.instances).toBe(1);
    await runtime.client.purge('child-only');
    const purged = runtime.durableWork.snapshot().byOrchestration.child;
    expect(purged?.historyBytes.current).toBe(0);
    expect(purged?.historyBytes.peakSum).toBe(stored);
  });

  test('continue-as-new: each new execution is a start, and the history shrinks again', async () => {
    const { runtime, store, settle } = await startEngine();
    await runtime.client.startNew('looper', { instanceId: 'loop', input: 0 });
    await settle();
    const looper = runtime.durableWork.snapshot().byOrchestration.looper;
    expect(looper?.actionsByKind.orchestrationStarts).toBe(3);
    expect(looper?.actionsByKind.timerCompletions).toBe(3);
    expect(looper?.actions).toBe(6);
    expect(looper?.continuedAsNew).toBe(2);
    expect(looper?.timersCreated).toBe(3);
    // The last execution's history is what remains; the instance's peak is at least that.
    expect(looper?.historyBytes.current).toBe(await storedHistoryBytes(store, 'loop'));
    expect(looper?.historyBytes.peakInstance).toBeGreaterThanOrEqual(looper?.historyBytes.current ?? 0);
  });

  test('a termination is one action; the per-second series and its peak follow the clock', async () => {
    const { runtime, settle, clock } = await startEngine();
    await runtime.client.startNew('waiter', { instanceId: 'w1' });
    await runtime.client.startNew('waiter', { instanceId: 'w2' });
    await settle();
    clock.setTimer(clock.now() + 3_000, () => undefined);
    clock.fireNext();
    await runtime.client.terminate('w1', 'test');
    const snapshot = runtime.durableWork.snapshot();
    expect(snapshot.byOrchestration.waiter?.actionsByKind.terminations).toBe(1);
    expect(snapshot.byOrchestration.waiter?.actions).toBe(3);
    const first = Math.floor(START.getTime() / 1000);
    expect(snapshot.actionsPerSecond).toEqual([
      { second: first, actions: 2 },
      { second: first + 3, actions: 1 },
    ]);
    expect(snapshot.peakActionsPerSecond).toEqual({ second: first, actions: 2 });
  });
});

describe('the local host counts the use of its activity slots', () => {
  test('a fifth and sixth activity wait for a slot of four; waits, peaks and slot-seconds follow', async () => {
    const { runtime, settle, clock } = await startEngine();
    const advance = (ms: number): void => {
      clock.setTimer(clock.now() + ms, () => undefined);
      clock.fireNext();
    };
    for (let i = 0; i < 6; i++) await runtime.client.startNew('holder', { instanceId: `holder-${i}` });
    await until(() => holds.length === 4);
    expect(runtime.activitySlots.snapshot()).toMatchObject({ capacity: 4, inUse: 4, waiting: 2 });

    advance(2_000);
    holds.splice(0, 2).forEach((release) => release());
    await until(() => holds.length === 4);
    advance(1_000);
    holds.splice(0).forEach((release) => release());
    await settle();

    const slots = runtime.activitySlots.snapshot();
    expect(slots.inUse).toBe(0);
    expect(slots.waiting).toBe(0);
    const hold = slots.byActivity.hold;
    expect(hold?.executions).toBe(6);
    expect(hold?.queued).toBe(2);
    expect(hold?.peakInUse).toBe(4);
    // Four waited 0, two waited 2 s.
    expect(hold?.waitForSlot).toEqual({ p50Ms: 0, p99Ms: 2_000, maxMs: 2_000 });
    // Two held 2 s, two 3 s, the two that waited 1 s each.
    expect(hold?.slotSeconds).toBe(12);
    expect(slots.total.slotSeconds).toBe(12);
    // A freed slot was taken again at once, so all four were in use until the last release.
    expect(slots.allInUseSeconds).toBe(3);
    // The slots are counted by activity; the Durable work by orchestration, as before.
    expect(runtime.durableWork.snapshot().byOrchestration.holder?.activityExecutions).toBe(6);
  });
});

describe('snapshots of successive host processes merge', () => {
  test('counts and seconds add up; an instance keeps its largest peak and its latest size', () => {
    let now = 1_000;
    const first = createDurableWorkRecorder(() => now);
    first.action('launch', 'orchestrationStarts');
    first.historySaved({
      instanceId: 'a',
      name: 'launch',
      history: [{ type: 'OrchestratorStarted', timestamp: 'x' }],
    });
    const before = first.snapshot({ instances: true });
    now = 2_500;
    const second = createDurableWorkRecorder(() => now);
    second.action('launch', 'timerCompletions');
    second.action('launch', 'activityStarts');
    second.historySaved({ instanceId: 'a', name: 'launch', history: [] });
    const merged = mergeDurableWork([second.snapshot({ instances: true }), before]);
    expect(merged.byOrchestration.launch?.actions).toBe(3);
    expect(merged.actionsPerSecond).toEqual([
      { second: 1, actions: 1 },
      { second: 2, actions: 2 },
    ]);
    expect(merged.byOrchestration.launch?.historyBytes.current).toBe(2);
    expect(merged.byOrchestration.launch?.historyBytes.peakInstance).toBe(
      before.total.historyBytes.peakInstance,
    );
    expect(() => mergeDurableWork([first.snapshot()])).toThrow(/instances/);
  });
});

/** Lets the runtime's promises run until `condition` holds (activities in progress keep it from settling). */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !condition(); turn++)
    await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

/** The UTF-8 size of the instance's history as the store holds it now, serialized here. */
async function storedHistoryBytes(store: HistoryStore, instanceId: string): Promise<number> {
  const record = await store.load(instanceId);
  expect(record).toBeDefined();
  return Buffer.byteLength(JSON.stringify(record?.history ?? null), 'utf8');
}
