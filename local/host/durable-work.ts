// Counts the Durable engine's work in the in-process host, so a NodeClaim's cost on the backend can be
// measured instead of guessed. Two kinds of figure: the actions the Durable Task Scheduler bills (a message
// it dispatches to the app: an orchestration's start, an activity's start, the processing of an activity's
// or sub-orchestration's result, a timer's completion, an external event's delivery, a termination; a
// replay inside one dispatch is no action of its own, and an orchestration's completion happens in the
// dispatch of its last event), and the engine's own work (episodes, history events appended, timers
// created and fired, continue-as-new, history bytes). Everything is kept per orchestration type, on the
// host's clock, and a per-second series of actions gives the peak rate.
import type { InstanceRecord } from './history.js';

/** The Durable Task Scheduler's billable actions, by what dispatched them. */
export interface DurableActionCounts {
  /** ExecutionStarted dispatched: a client's start, a sub-orchestration's start, or a continue-as-new restart. */
  orchestrationStarts: number;
  /** An activity's work item dispatched (the activity runs). */
  activityStarts: number;
  /** An activity's result (TaskCompleted or TaskFailed) dispatched back to its orchestration. */
  activityResults: number;
  /** A durable timer's TimerFired dispatched to its orchestration. */
  timerCompletions: number;
  /** A raised event dispatched to its orchestration. */
  externalEvents: number;
  /** A sub-orchestration's result dispatched to its parent. */
  subOrchestrationResults: number;
  /** A running orchestration terminated by a client. */
  terminations: number;
}

/** Serialized history sizes (UTF-8 bytes of the stored history's JSON), of the instances of one kind. */
export interface HistoryBytes {
  /** Summed over the instances as they are now (a purged or continued-as-new history counts as 0). */
  current: number;
  /** The largest history one instance reached. */
  peakInstance: number;
  /** Every instance's own peak, summed: the history the engine had to keep, over the instances' lives. */
  peakSum: number;
  /** Instances seen. */
  instances: number;
}

export interface DurableWorkCounts {
  /** The billable actions in all (the sum of actionsByKind). */
  actions: number;
  actionsByKind: DurableActionCounts;
  /** Orchestrator replays: one per dispatched message to an orchestration, each over the whole history. */
  episodes: number;
  historyEventsAppended: number;
  activityExecutions: number;
  timersCreated: number;
  /** Timers that came due while their instance still waited for them. */
  timersFired: number;
  /** client.raiseEvent calls that reached a running instance. */
  externalEventsRaised: number;
  continuedAsNew: number;
  historyBytes: HistoryBytes;
}

export interface InstanceHistoryBytes {
  instanceId: string;
  name: string;
  currentBytes: number;
  peakBytes: number;
}

/** One second of the host's clock and the actions dispatched in it. */
export interface ActionsInSecond {
  /** Seconds since the Unix epoch on the host's clock (scaled when the clock is). */
  second: number;
  actions: number;
}

export interface DurableWorkSnapshot {
  /** When the snapshot was taken, on the host's clock (ms since epoch). */
  at: number;
  total: DurableWorkCounts;
  /** Keyed by the orchestrator function's name; activities count under the orchestration that called them. */
  byOrchestration: Record<string, DurableWorkCounts>;
  /** Only the seconds with at least one action, oldest first. */
  actionsPerSecond: ActionsInSecond[];
  /** The busiest second, or undefined before any action. */
  peakActionsPerSecond: ActionsInSecond | undefined;
  /** Each instance's history bytes; only when asked for (mergeDurableWork needs them). */
  instances?: InstanceHistoryBytes[];
}

export type DurableActionKind = keyof DurableActionCounts;

/** What the orchestration runtime reports as it works. */
export interface DurableWorkRecorder {
  action(orchestration: string, kind: DurableActionKind): void;
  episode(orchestration: string): void;
  historyAppended(orchestration: string, events: number): void;
  activityExecuted(orchestration: string): void;
  timerCreated(orchestration: string): void;
  timerFired(orchestration: string): void;
  externalEventRaised(orchestration: string): void;
  continuedAsNew(orchestration: string): void;
  /** The record as it is being saved: its history's serialized size becomes the instance's current size. */
  historySaved(record: Pick<InstanceRecord, 'instanceId' | 'name' | 'history'>): void;
  /** The instance was purged: its history is gone. */
  historyRemoved(instanceId: string): void;
  snapshot(options?: { instances?: boolean }): DurableWorkSnapshot;
}

/** What the recorder adds up; the action total and history bytes are derived when a snapshot is taken. */
type MutableCounts = Omit<DurableWorkCounts, 'actions' | 'historyBytes'>;

const zeroActions = (): DurableActionCounts => ({
  orchestrationStarts: 0,
  activityStarts: 0,
  activityResults: 0,
  timerCompletions: 0,
  externalEvents: 0,
  subOrchestrationResults: 0,
  terminations: 0,
});

const zeroCounts = (): MutableCounts => ({
  actionsByKind: zeroActions(),
  episodes: 0,
  historyEventsAppended: 0,
  activityExecutions: 0,
  timersCreated: 0,
  timersFired: 0,
  externalEventsRaised: 0,
  continuedAsNew: 0,
});

const sumActions = (counts: DurableActionCounts): number =>
  Object.values(counts).reduce((sum, value) => sum + value, 0);

export function createDurableWorkRecorder(now: () => number): DurableWorkRecorder {
  const byName = new Map<string, MutableCounts>();
  const instances = new Map<string, InstanceHistoryBytes>();
  const perSecond = new Map<number, number>();

  const countsOf = (name: string): MutableCounts => {
    let counts = byName.get(name);
    if (counts === undefined) {
      counts = zeroCounts();
      byName.set(name, counts);
    }
    return counts;
  };
  const bump = (name: string, field: Exclude<keyof MutableCounts, 'actionsByKind'>, by = 1): void => {
    countsOf(name)[field] += by;
  };

  return {
    action: (name, kind) => {
      countsOf(name).actionsByKind[kind] += 1;
      const second = Math.floor(now() / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    },
    episode: (name) => bump(name, 'episodes'),
    historyAppended: (name, events) => bump(name, 'historyEventsAppended', events),
    activityExecuted: (name) => bump(name, 'activityExecutions'),
    timerCreated: (name) => bump(name, 'timersCreated'),
    timerFired: (name) => bump(name, 'timersFired'),
    externalEventRaised: (name) => bump(name, 'externalEventsRaised'),
    continuedAsNew: (name) => bump(name, 'continuedAsNew'),
    historySaved: (record) => {
      const bytes = Buffer.byteLength(JSON.stringify(record.history), 'utf8');
      const known = instances.get(record.instanceId);
      if (known === undefined) {
        instances.set(record.instanceId, {
          instanceId: record.instanceId,
          name: record.name,
          currentBytes: bytes,
          peakBytes: bytes,
        });
        countsOf(record.name);
        return;
      }
      known.name = record.name;
      known.currentBytes = bytes;
      known.peakBytes = Math.max(known.peakBytes, bytes);
    },
    historyRemoved: (instanceId) => {
      const known = instances.get(instanceId);
      if (known !== undefined) known.currentBytes = 0;
    },
    snapshot: (options = {}) =>
      snapshotOf({
        at: now(),
        counts: byName,
        instances: [...instances.values()].map((instance) => ({ ...instance })),
        perSecond,
        includeInstances: options.instances === true,
      }),
  };
}

function snapshotOf(input: {
  at: number;
  counts: ReadonlyMap<string, MutableCounts>;
  instances: readonly InstanceHistoryBytes[];
  perSecond: ReadonlyMap<number, number>;
  includeInstances: boolean;
}): DurableWorkSnapshot {
  const byOrchestration: Record<string, DurableWorkCounts> = {};
  const total = zeroCounts();
  for (const [name, counts] of [...input.counts].sort(([a], [b]) => a.localeCompare(b))) {
    byOrchestration[name] = finished(
      counts,
      input.instances.filter((instance) => instance.name === name),
    );
    for (const kind of Object.keys(total.actionsByKind) as DurableActionKind[])
      total.actionsByKind[kind] += counts.actionsByKind[kind];
    for (const field of [
      'episodes',
      'historyEventsAppended',
      'activityExecutions',
      'timersCreated',
      'timersFired',
      'externalEventsRaised',
      'continuedAsNew',
    ] as const)
      total[field] += counts[field];
  }
  const actionsPerSecond = [...input.perSecond]
    .map(([second, actions]) => ({ second, actions }))
    .sort((a, b) => a.second - b.second);
  const peakActionsPerSecond = actionsPerSecond.reduce<ActionsInSecond | undefined>(
    (peak, entry) => (peak === undefined || entry.actions > peak.actions ? entry : peak),
    undefined,
  );
  return {
    at: input.at,
    total: finished(total, input.instances),
    byOrchestration,
    actionsPerSecond,
    peakActionsPerSecond: peakActionsPerSecond === undefined ? undefined : { ...peakActionsPerSecond },
    ...(input.includeInstances ? { instances: input.instances.map((instance) => ({ ...instance })) } : {}),
  };
}

function finished(counts: MutableCounts, instances: readonly InstanceHistoryBytes[]): DurableWorkCounts {
  return {
    actions: sumActions(counts.actionsByKind),
    actionsByKind: { ...counts.actionsByKind },
    episodes: counts.episodes,
    historyEventsAppended: counts.historyEventsAppended,
    activityExecutions: counts.activityExecutions,
    timersCreated: counts.timersCreated,
    timersFired: counts.timersFired,
    externalEventsRaised: counts.externalEventsRaised,
    continuedAsNew: counts.continuedAsNew,
    historyBytes: {
      current: instances.reduce((sum, instance) => sum + instance.currentBytes, 0),
      peakInstance: instances.reduce((max, instance) => Math.max(max, instance.peakBytes), 0),
      peakSum: instances.reduce((sum, instance) => sum + instance.peakBytes, 0),
      instances: instances.length,
    },
  };
}

/**
 * One snapshot from several host processes that worked on the same instances one after another (a host
 * killed and restarted on the same history): counts and seconds add up; an instance's current size is the
 * latest process's, its peak the largest any process saw. Each snapshot needs its instances.
 */
export function mergeDurableWork(snapshots: readonly DurableWorkSnapshot[]): DurableWorkSnapshot {
  const ordered = [...snapshots].sort((a, b) => a.at - b.at);
  const counts = new Map<string, MutableCounts>();
  const instances = new Map<string, InstanceHistoryBytes>();
  const perSecond = new Map<number, number>();
  for (const snapshot of ordered) {
    if (snapshot.instances === undefined)
      throw new Error('mergeDurableWork needs snapshots taken with { instances: true }');
    for (const [name, source] of Object.entries(snapshot.byOrchestration)) {
      const target = counts.get(name) ?? zeroCounts();
      counts.set(name, target);
      for (const kind of Object.keys(target.actionsByKind) as DurableActionKind[])
        target.actionsByKind[kind] += source.actionsByKind[kind];
      target.episodes += source.episodes;
      target.historyEventsAppended += source.historyEventsAppended;
      target.activityExecutions += source.activityExecutions;
      target.timersCreated += source.timersCreated;
      target.timersFired += source.timersFired;
      target.externalEventsRaised += source.externalEventsRaised;
      target.continuedAsNew += source.continuedAsNew;
    }
    for (const instance of snapshot.instances) {
      const known = instances.get(instance.instanceId);
      instances.set(instance.instanceId, {
        ...instance,
        peakBytes: Math.max(instance.peakBytes, known?.peakBytes ?? 0),
      });
    }
    for (const { second, actions } of snapshot.actionsPerSecond)
      perSecond.set(second, (perSecond.get(second) ?? 0) + actions);
  }
  return snapshotOf({
    at: ordered.at(-1)?.at ?? 0,
    counts,
    instances: [...instances.values()],
    perSecond,
    includeInstances: true,
  });
}
