// What a NodeClaim costs the Durable backend, from the local host's count of Durable work: actions per
// NodeClaim (in all and per orchestration type), history bytes per NodeClaim, the busiest second, and the
// same extrapolated to a 1,000-node burst, beside the Consumption tier's 500 actions/s and the goals. Used
// by the day (over its run), by the bench (over N launches through termination) and by the scale
// scenario, which adds how the host's activity slots held up under its burst. Pure.
import type {
  ActionsInSecond,
  ActivitySlotsSnapshot,
  DurableWorkCounts,
  DurableWorkSnapshot,
} from '../../host/index.js';

/** The Durable Task Scheduler Consumption tier's dispatch limit. */
export const CONSUMPTION_ACTIONS_PER_SECOND = 500;
export const DURABLE_GOALS = { actionsPerNodeClaim: 15, burstActionsPerSecond: 250 } as const;
const BURST_NODES = 1_000;
const BURST_SECONDS = 60;

export interface OrchestrationDurableFigures {
  name: string;
  actionsPerNodeClaim: number;
  /** Actions by kind, per NodeClaim. */
  actionsByKindPerNodeClaim: Record<string, number>;
  episodesPerNodeClaim: number;
  historyEventsPerNodeClaim: number;
  historyBytesPerNodeClaim: number;
  peakInstanceHistoryBytes: number;
}

export interface DurableFigures {
  nodeClaims: number;
  actions: number;
  actionsPerNodeClaim: number;
  byOrchestration: OrchestrationDurableFigures[];
  episodesPerNodeClaim: number;
  historyEventsPerNodeClaim: number;
  /** Every instance's peak history, summed, per NodeClaim. */
  historyBytesPerNodeClaim: number;
  peakInstanceHistoryBytes: number;
  peakActionsPerSecond: number;
  /** 1,000 NodeClaims' lifetimes of actions, all within one minute: a mean rate over that minute. */
  burstMeanActionsPerSecond: number;
  /** The peak second scaled from this run's NodeClaims to 1,000 (as if they came as this run's did). */
  burstPeakActionsPerSecond: number;
}

const round = (value: number, digits = 1): number => Number(value.toFixed(digits));

function perClaim(counts: DurableWorkCounts, nodeClaims: number, name: string): OrchestrationDurableFigures {
  const per = (value: number): number => round(value / Math.max(1, nodeClaims), 2);
  return {
    name,
    actionsPerNodeClaim: per(counts.actions),
    actionsByKindPerNodeClaim: Object.fromEntries(
      Object.entries(counts.actionsByKind).map(([kind, value]) => [kind, per(value)]),
    ),
    episodesPerNodeClaim: per(counts.episodes),
    historyEventsPerNodeClaim: per(counts.historyEventsAppended),
    historyBytesPerNodeClaim: Math.round(counts.historyBytes.peakSum / Math.max(1, nodeClaims)),
    peakInstanceHistoryBytes: counts.historyBytes.peakInstance,
  };
}

/** `nodeClaims`: the NodeClaims that launched over the counted span. */
export function durableFigures(snapshot: DurableWorkSnapshot, nodeClaims: number): DurableFigures {
  const total = perClaim(snapshot.total, nodeClaims, 'all');
  const peak = snapshot.peakActionsPerSecond?.actions ?? 0;
  return {
    nodeClaims,
    actions: snapshot.total.actions,
    actionsPerNodeClaim: total.actionsPerNodeClaim,
    byOrchestration: Object.entries(snapshot.byOrchestration)
      .map(([name, counts]) => perClaim(counts, nodeClaims, name))
      .sort((a, b) => b.actionsPerNodeClaim - a.actionsPerNodeClaim),
    episodesPerNodeClaim: total.episodesPerNodeClaim,
    historyEventsPerNodeClaim: total.historyEventsPerNodeClaim,
    historyBytesPerNodeClaim: total.historyBytesPerNodeClaim,
    peakInstanceHistoryBytes: total.peakInstanceHistoryBytes,
    peakActionsPerSecond: peak,
    burstMeanActionsPerSecond: round((total.actionsPerNodeClaim * BURST_NODES) / BURST_SECONDS),
    burstPeakActionsPerSecond: nodeClaims > 0 ? round((peak * BURST_NODES) / nodeClaims) : 0,
  };
}

/**
 * The busiest second of a burst of `burstNodes` NodeClaims arriving evenly over `burstSeconds`, from a
 * run whose `nodeClaims` all started in `startSecond`: that run's actions per second after its start,
 * per NodeClaim, is one NodeClaim's profile, and the burst is the sum of that profile shifted by each
 * arrival. Only as good as the run's start was simultaneous.
 */
export function evenBurstPeak(
  series: readonly ActionsInSecond[],
  startSecond: number,
  nodeClaims: number,
  burstNodes = BURST_NODES,
  burstSeconds = BURST_SECONDS,
): number {
  if (nodeClaims <= 0 || series.length === 0) return 0;
  const profile = new Map<number, number>();
  for (const { second, actions } of series) {
    const offset = second - startSecond;
    if (offset >= 0) profile.set(offset, (profile.get(offset) ?? 0) + actions / nodeClaims);
  }
  const arrivalsPerSecond = burstNodes / burstSeconds;
  const rate = new Map<number, number>();
  for (let arrival = 0; arrival < burstSeconds; arrival++)
    for (const [offset, actions] of profile)
      rate.set(arrival + offset, (rate.get(arrival + offset) ?? 0) + actions * arrivalsPerSecond);
  return round(Math.max(0, ...rate.values()));
}

/** Lines for a console: the table per orchestration type, then the totals beside the goals. */
export function durableFigureLines(
  figures: DurableFigures,
  peakSecondLabel: string,
  /** Whether the run was a burst, whose extrapolation to 1,000 NodeClaims is printed. */
  burst = true,
): string[] {
  const kinds = [
    ['orchestrationStarts', 'starts'],
    ['activityStarts', 'activities'],
    ['activityResults', 'results'],
    ['timerCompletions', 'timers'],
    ['externalEvents', 'events'],
    ['subOrchestrationResults', 'sub-orch results'],
    ['terminations', 'terminations'],
  ] as const;
  const header = [
    'orchestration',
    'actions/NodeClaim',
    ...kinds.map(([, label]) => label),
    'replays',
    'history events',
    'history bytes',
    'largest history B',
  ];
  const rows = [...figures.byOrchestration, ...[totalRow(figures)]].map((row) => [
    row.name,
    row.actionsPerNodeClaim.toFixed(2),
    ...kinds.map(([kind]) => (row.actionsByKindPerNodeClaim[kind] ?? 0).toFixed(2)),
    row.episodesPerNodeClaim.toFixed(2),
    row.historyEventsPerNodeClaim.toFixed(1),
    String(row.historyBytesPerNodeClaim),
    String(row.peakInstanceHistoryBytes),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const format = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  const meets = (value: number, limit: number): string => (value <= limit ? 'met' : 'NOT met');
  return [
    `per NodeClaim, over ${figures.nodeClaims} NodeClaims (${figures.actions} actions in all; the Durable Task Scheduler's billing: replays are not actions)`,
    format(header),
    format(widths.map((w) => '-'.repeat(w))),
    ...rows.map(format),
    `top contributors: ${topContributors(figures)}`,
    `actions per NodeClaim lifetime: ${figures.actionsPerNodeClaim} (goal ≤ ${DURABLE_GOALS.actionsPerNodeClaim}: ${meets(figures.actionsPerNodeClaim, DURABLE_GOALS.actionsPerNodeClaim)})`,
    `history per NodeClaim: ${figures.historyBytesPerNodeClaim} B (each instance's peak, summed), largest one instance ${figures.peakInstanceHistoryBytes} B`,
    `peak actions/s: ${figures.peakActionsPerSecond} (${peakSecondLabel})`,
    ...(burst
      ? [
          `extrapolated to a 1,000-node burst in one minute: mean ${figures.burstMeanActionsPerSecond} actions/s if every lifetime's actions fell in that minute; peak second scaled from ${figures.nodeClaims} to 1,000 NodeClaims ${figures.burstPeakActionsPerSecond} actions/s (goal ≤ ${DURABLE_GOALS.burstActionsPerSecond}: ${meets(Math.max(figures.burstMeanActionsPerSecond, figures.burstPeakActionsPerSecond), DURABLE_GOALS.burstActionsPerSecond)}; Consumption tier ${CONSUMPTION_ACTIONS_PER_SECOND}/s)`,
        ]
      : []),
  ];
}

function totalRow(figures: DurableFigures): OrchestrationDurableFigures {
  const sum = (kind: string): number =>
    round(
      figures.byOrchestration.reduce((s, row) => s + (row.actionsByKindPerNodeClaim[kind] ?? 0), 0),
      2,
    );
  const kinds = Object.keys(figures.byOrchestration[0]?.actionsByKindPerNodeClaim ?? {});
  return {
    name: 'all',
    actionsPerNodeClaim: figures.actionsPerNodeClaim,
    actionsByKindPerNodeClaim: Object.fromEntries(kinds.map((kind) => [kind, sum(kind)])),
    episodesPerNodeClaim: figures.episodesPerNodeClaim,
    historyEventsPerNodeClaim: figures.historyEventsPerNodeClaim,
    historyBytesPerNodeClaim: figures.historyBytesPerNodeClaim,
    peakInstanceHistoryBytes: figures.peakInstanceHistoryBytes,
  };
}

/** The five largest (orchestration, kind of action) pairs, with their share of all actions. */
export function topContributors(figures: DurableFigures): string {
  const pairs = figures.byOrchestration.flatMap((row) =>
    Object.entries(row.actionsByKindPerNodeClaim).map(([kind, value]) => ({ name: row.name, kind, value })),
  );
  const total = Math.max(Number.EPSILON, figures.actionsPerNodeClaim);
  return pairs
    .filter((pair) => pair.value > 0)
    .sort((a, b) => b.value - a.value)
    .slice(0, 5)
    .map(
      (pair) =>
        `${pair.name} ${pair.kind} ${pair.value.toFixed(2)} (${Math.round((pair.value / total) * 100)}%)`,
    )
    .join(', ');
}

/** How the host's activity slots were used over a run, rounded for a report. */
export interface ActivitySlotFigures {
  /** maxConcurrentActivityFunctions. */
  capacity: number;
  peakInUse: number;
  /** Seconds during which every slot was in use. */
  allInUseSeconds: number;
  executions: number;
  /** Work items that found every slot taken and waited for one. */
  queued: number;
  /** Each work item's wait for a free slot, 0 when one was free. */
  waitP50Ms: number;
  waitP99Ms: number;
  waitMaxMs: number;
  slotSeconds: number;
  /** The activities, the most slot-seconds first. */
  byActivity: {
    name: string;
    executions: number;
    peakInUse: number;
    slotSeconds: number;
    waitP99Ms: number;
    waitMaxMs: number;
  }[];
}

export function activitySlotFigures(snapshot: ActivitySlotsSnapshot): ActivitySlotFigures {
  return {
    capacity: snapshot.capacity,
    peakInUse: snapshot.total.peakInUse,
    allInUseSeconds: round(snapshot.allInUseSeconds),
    executions: snapshot.total.executions,
    queued: snapshot.total.queued,
    waitP50Ms: Math.round(snapshot.total.waitForSlot.p50Ms),
    waitP99Ms: Math.round(snapshot.total.waitForSlot.p99Ms),
    waitMaxMs: Math.round(snapshot.total.waitForSlot.maxMs),
    slotSeconds: round(snapshot.total.slotSeconds),
    byActivity: Object.entries(snapshot.byActivity)
      .map(([name, use]) => ({
        name,
        executions: use.executions,
        peakInUse: use.peakInUse,
        slotSeconds: round(use.slotSeconds),
        waitP99Ms: Math.round(use.waitForSlot.p99Ms),
        waitMaxMs: Math.round(use.waitForSlot.maxMs),
      }))
      .sort((a, b) => b.slotSeconds - a.slotSeconds || a.name.localeCompare(b.name)),
  };
}

/** A run's Durable work with the in-process host: per NodeClaim, its busiest second, and the slots. */
export interface RunDurableFigures {
  durable: DurableFigures;
  /** When the busiest second began, in whole seconds after the run's start; undefined without actions. */
  peakSecondAfterStart: number | undefined;
  /**
   * Actions the host counted before the run started: its count covers its whole life, so work the
   * stack or an earlier scenario gave it is in the figures too, and this says how much.
   */
  actionsBeforeStart: number;
  slots: ActivitySlotFigures;
}

export function runDurableFigures(input: {
  work: DurableWorkSnapshot;
  slots: ActivitySlotsSnapshot;
  /** Every NodeClaim created over the run. */
  nodeClaims: number;
  /** The run's start on the host's clock (ms since epoch). */
  startedAt: number;
}): RunDurableFigures {
  const startSecond = Math.floor(input.startedAt / 1000);
  const peak = input.work.peakActionsPerSecond;
  return {
    durable: durableFigures(input.work, input.nodeClaims),
    peakSecondAfterStart: peak === undefined ? undefined : peak.second - startSecond,
    actionsBeforeStart: input.work.actionsPerSecond
      .filter((entry) => entry.second < startSecond)
      .reduce((sum, entry) => sum + entry.actions, 0),
    slots: activitySlotFigures(input.slots),
  };
}

/** A wait for a console: milliseconds below a second, else seconds to a tenth. */
const waitText = (ms: number): string => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/**
 * Short lines for a run's summary: actions per NodeClaim and the busiest orchestration types, the peak
 * second, history per NodeClaim, and the activity slots. `burstNodes`, the size of the run's scale-up,
 * says whether the peak is judged against the goal for a 1,000-node burst.
 */
export function runDurableLines(run: RunDurableFigures, burstNodes: number, topOrchestrations = 3): string[] {
  const { durable, slots } = run;
  const meets = (value: number, limit: number): string => (value <= limit ? 'met' : 'NOT met');
  const top = durable.byOrchestration
    .filter((row) => row.actionsPerNodeClaim > 0)
    .slice(0, topOrchestrations)
    .map((row) => `${row.name} ${row.actionsPerNodeClaim}`)
    .join(', ');
  const peakGoal =
    burstNodes >= BURST_NODES
      ? `goal ≤ ${DURABLE_GOALS.burstActionsPerSecond}/s in a 1,000-node burst: ${meets(durable.peakActionsPerSecond, DURABLE_GOALS.burstActionsPerSecond)}`
      : `goal ≤ ${DURABLE_GOALS.burstActionsPerSecond}/s in a 1,000-node burst; this scale-up was ${burstNodes} nodes`;
  const after = run.peakSecondAfterStart;
  const peakWhen =
    after === undefined
      ? 'no actions'
      : after >= 0
        ? `${after} s into the run`
        : `${-after} s before the run started`;
  const activities = slots.byActivity
    .slice(0, 3)
    .map((activity) => `${activity.name} ${Math.round(activity.slotSeconds)} (peak ${activity.peakInUse})`)
    .join(', ');
  return [
    `actions per NodeClaim lifetime: ${durable.actionsPerNodeClaim} over ${durable.nodeClaims} NodeClaims (goal ≤ ${DURABLE_GOALS.actionsPerNodeClaim}: ${meets(durable.actionsPerNodeClaim, DURABLE_GOALS.actionsPerNodeClaim)})${top ? `; ${top}` : ''}`,
    `peak: ${durable.peakActionsPerSecond} actions/s, ${peakWhen} (${peakGoal})`,
    `history per NodeClaim: ${durable.historyBytesPerNodeClaim} B (each instance's peak, summed); largest one instance ${durable.peakInstanceHistoryBytes} B`,
    ...(run.actionsBeforeStart > 0
      ? [
          `counted since the host started: ${run.actionsBeforeStart} of the ${durable.actions} actions came before the run`,
        ]
      : []),
    `activity slots: peak ${slots.peakInUse} of ${slots.capacity} in use, all ${slots.capacity} for ${slots.allInUseSeconds} s; wait for a slot p50 ${waitText(slots.waitP50Ms)}, p99 ${waitText(slots.waitP99Ms)}, max ${waitText(slots.waitMaxMs)} (${slots.queued} of ${slots.executions} work items waited)`,
    `slot-seconds: ${Math.round(slots.slotSeconds)} in all${activities ? `; ${activities}` : ''}`,
  ];
}

/** The headline figures as numbers, for a scenario's figures (its results JSON). */
export function flatRunDurableFigures(run: RunDurableFigures): Record<string, number> {
  const { durable, slots } = run;
  return {
    durableNodeClaims: durable.nodeClaims,
    durableActions: durable.actions,
    durableActionsPerNodeClaim: durable.actionsPerNodeClaim,
    ...Object.fromEntries(
      durable.byOrchestration.map((row) => [
        `durableActionsPerNodeClaim.${row.name}`,
        row.actionsPerNodeClaim,
      ]),
    ),
    durablePeakActionsPerSecond: durable.peakActionsPerSecond,
    ...(run.peakSecondAfterStart !== undefined
      ? { durablePeakActionsSecondAfterStart: run.peakSecondAfterStart }
      : {}),
    durableActionsBeforeStart: run.actionsBeforeStart,
    durableHistoryBytesPerNodeClaim: durable.historyBytesPerNodeClaim,
    durablePeakInstanceHistoryBytes: durable.peakInstanceHistoryBytes,
    activitySlots: slots.capacity,
    activitySlotsPeakInUse: slots.peakInUse,
    activitySlotsAllInUseSeconds: slots.allInUseSeconds,
    activitySlotWaitP50Ms: slots.waitP50Ms,
    activitySlotWaitP99Ms: slots.waitP99Ms,
    activitySlotWaitMaxMs: slots.waitMaxMs,
    activityExecutions: slots.executions,
    activityExecutionsQueued: slots.queued,
    activitySlotSeconds: slots.slotSeconds,
    ...Object.fromEntries(
      slots.byActivity.flatMap((activity) => [
        [`activitySlotSeconds.${activity.name}`, activity.slotSeconds],
        [`activitySlotsPeakInUse.${activity.name}`, activity.peakInUse],
        [`activitySlotWaitP99Ms.${activity.name}`, activity.waitP99Ms],
      ]),
    ),
  };
}
