// The launch monitor, second version: the same outcome as launch-monitor.ts for a fraction of the Durable
// actions. The first version waits for each poll of the VM's creation on a durable timer and polls through
// an activity, three actions every 5 s, and records success in an activity of its own; this one hands the
// waiting to one activity (awaitVmCreation) that polls at the same pace (the launches in flight, ARM's
// Retry-After and throttling budget: decisions/launch-poll-pacing.ts) for up to ACTIVITY_WAIT_WINDOW_SECONDS
// and records success within the poll that sees it, so a VM created within the window costs the monitor
// its start and one activity. A failure is still seen within one poll (the activity answers at once) and
// recorded, relaunched or timed out exactly as the first version does; a wait longer than the window (ARM
// throttling) goes on a durable timer rather than holding an activity.
//
// It is a new orchestration beside the first, not a change to it: Durable replays a history against the
// orchestrator's code, so the first version stays registered, unchanged, for the monitors started before
// the upgrade (docs/design.md, "Names are history"). The instance ID is the same (launchMonitorInstanceId),
// so whoever checks or stops "the monitor of this NodeClaim" finds either version. Deterministic as
// Durable requires: time comes from currentUtcDateTime, spread from the instance ID, I/O from activities;
// the history stays bounded by continue-as-new as the first version's does, carrying the same progress.
import type * as df from 'durable-functions';
import type { CloudFailureInfo, LaunchFailure } from '../../cloudprovider/types.js';
import { nextPollPacing, spreadMs, type PollPacing } from '../../decisions/launch-poll-pacing.js';
import { LaunchMonitorNames } from '../../runtime/function-names.js';
import { ACTIVITY_WAIT_WINDOW_SECONDS } from '../durable/activity-wait.js';
import { callThroughOutages, durableActivity, type DurableActivity } from '../durable/durable-activity.js';
import { countingTasks, timerUntil, type TaskCount } from '../durable/history-budget.js';
import {
  LaunchMonitorActivities,
  type LaunchMonitorInput,
  type LaunchMonitorOutput,
  type LaunchMonitorProgress,
  type RecordLaunchFailureInput,
} from './launch-monitor.js';

/**
 * Tasks one execution yields before it continues as new. A call of the waiting activity is one task (and
 * a throttled wait a second), so a monitor whose creation runs to the 15-minute deadline makes about 20
 * calls and never continues; the budget is the first version's, for the same bound on history.
 */
export const LAUNCH_MONITOR_V2_TASKS_PER_EXECUTION = 100;

export interface AwaitVmCreationInput {
  /** The monitor's input, for the success the activity records (without what continue-as-new carried). */
  monitor: Omit<LaunchMonitorInput, 'continued'>;
  pollerState?: string;
  /** The wait before this call's first poll, as the orchestration planned it (never past the window). */
  firstWaitMs: number;
  /** The last count of launches in flight, kept when this call cannot count them. */
  inFlightLaunches: number;
  /** Polls before this call, over the monitor's life: keys the spread of each wait. */
  polls: number;
  /** The spread's key: the monitor's instance ID, as the first version spreads its timers. */
  spreadKey: string;
  /** The launch's deadline (RFC 3339): no wait goes past it. */
  deadline: string;
  /** How long this call may spend waiting between its polls. */
  windowSeconds: number;
}

export type AwaitVmCreationResult =
  /** Created, and Launched=True recorded on the NodeClaim (or the NodeClaim was gone). */
  | { status: 'Launched'; polls: number }
  /** Failed, classified by the cloud provider; nothing recorded yet. */
  | { status: 'Failed'; failure: LaunchFailure; polls: number }
  /** Still being created when the window (or the deadline) came. */
  | {
      status: 'InProgress';
      polls: number;
      pollerState?: string;
      inFlightLaunches: number;
      pacing: PollPacing;
    };

export const LaunchMonitorV2Activities = {
  awaitVmCreation: durableActivity<AwaitVmCreationInput, AwaitVmCreationResult>(
    LaunchMonitorNames.awaitVmCreation,
  ),
};

/** The wait before poll number `poll`: the pace, spread by the launch and poll when the budget sets it. */
export function plannedWaitMs(pacing: PollPacing, spreadKey: string, poll: number): number {
  const intervalMs = pacing.seconds * 1000;
  return pacing.spread ? spreadMs(intervalMs, spreadKey, poll) : intervalMs;
}

export function* launchMonitorV2Orchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, LaunchMonitorOutput | undefined, unknown> {
  const { continued, ...input } = context.df.getInput<LaunchMonitorInput>();
  const deadline = Date.parse(input.startedAt) + input.deadlineMinutes * 60_000;
  const limits = { minSeconds: input.pollIntervalSeconds, maxSeconds: input.maxPollIntervalSeconds };
  let pacing = continued?.pacing ?? nextPollPacing({ inFlightLaunches: input.inFlightLaunches ?? 1 }, limits);
  let inFlightLaunches = continued?.inFlightLaunches ?? input.inFlightLaunches ?? 1;
  let pollerState = continued ? continued.pollerState : input.pollerState;
  let polls = continued?.polls ?? 0;
  const windowMs = ACTIVITY_WAIT_WINDOW_SECONDS * 1000;
  const count: TaskCount = { tasks: 0 };
  const call = <I, O>(activity: DurableActivity<I, O>, activityInput: I) =>
    countingTasks(count, callThroughOutages(context, activity, activityInput));
  const continuedAsNew = (state: Omit<LaunchMonitorProgress, 'continuations'>): boolean => {
    if (count.tasks < LAUNCH_MONITOR_V2_TASKS_PER_EXECUTION) return false;
    const next: LaunchMonitorInput = {
      ...input,
      continued: { ...state, continuations: (continued?.continuations ?? 0) + 1 },
    };
    context.df.continueAsNew(next);
    return true;
  };
  const progress = (): Omit<LaunchMonitorProgress, 'continuations'> => ({
    polls,
    ...(pollerState ? { pollerState } : {}),
    inFlightLaunches,
    pacing,
  });

  // A transient failure: the activity deletes the VM and is called again until it is gone, then lets
  // launch launch the NodeClaim again (as the first version does).
  function* relaunch(
    relaunching: LaunchFailure | CloudFailureInfo,
  ): Generator<df.Task, LaunchMonitorOutput | undefined, unknown> {
    const reported = 'reason' in relaunching ? { failure: relaunching } : { error: relaunching };
    const recording: RecordLaunchFailureInput = { monitor: input, ...reported, timedOut: false };
    const cloudCode = 'reason' in relaunching ? relaunching.cloudCode : relaunching.code;
    const code = cloudCode ? { code: cloudCode } : {};
    for (;;) {
      const next = context.df.currentUtcDateTime.getTime() + input.pollIntervalSeconds * 1000;
      yield* countingTasks(count, timerUntil(context, new Date(next)));
      const recorded = yield* call(LaunchMonitorActivities.recordLaunchFailure, recording);
      if (recorded?.relaunch !== 'VmDeleting') return { outcome: 'Relaunching', polls, ...code };
      if (continuedAsNew({ ...progress(), relaunching })) return undefined;
    }
  }

  if (continued?.relaunching) return yield* relaunch(continued.relaunching);

  for (;;) {
    const now = context.df.currentUtcDateTime.getTime();
    let firstWaitMs = Math.max(
      0,
      Math.min(plannedWaitMs(pacing, context.df.instanceId, polls + 1), deadline - now),
    );
    // A wait longer than an activity may hold (ARM throttling) is a durable timer: one action, no slot.
    if (firstWaitMs > windowMs) {
      yield* countingTasks(count, timerUntil(context, new Date(now + firstWaitMs)));
      firstWaitMs = 0;
    }
    const answer = yield* call(LaunchMonitorV2Activities.awaitVmCreation, {
      monitor: input,
      ...(pollerState ? { pollerState } : {}),
      firstWaitMs,
      inFlightLaunches,
      polls,
      spreadKey: context.df.instanceId,
      deadline: new Date(deadline).toISOString(),
      windowSeconds: ACTIVITY_WAIT_WINDOW_SECONDS,
    });
    polls = answer.polls;

    if (answer.status === 'Launched') return { outcome: 'Launched', polls };
    if (answer.status === 'Failed') {
      const failure: RecordLaunchFailureInput = { monitor: input, failure: answer.failure, timedOut: false };
      const code = answer.failure.cloudCode ? { code: answer.failure.cloudCode } : {};
      const recorded = yield* call(LaunchMonitorActivities.recordLaunchFailure, failure);
      if (!recorded) return { outcome: 'Failed', polls, ...code };
      if (recorded.relaunch !== 'VmDeleting') return { outcome: 'Relaunching', polls, ...code };
      return yield* relaunch(answer.failure);
    }
    if (context.df.currentUtcDateTime.getTime() >= deadline) {
      const failure: RecordLaunchFailureInput = { monitor: input, timedOut: true };
      yield* call(LaunchMonitorActivities.recordLaunchFailure, failure);
      return { outcome: 'TimedOut', polls };
    }
    pollerState = answer.pollerState ?? pollerState;
    inFlightLaunches = answer.inFlightLaunches;
    pacing = answer.pacing;
    if (continuedAsNew(progress())) return undefined;
  }
}
