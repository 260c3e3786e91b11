// The launch monitor orchestration: wait on a durable timer, poll the VM's long-running operation once
// through an activity, repeat until ARM reports an outcome or the deadline passes, then record the outcome
// on the NodeClaim through another activity. The wait between polls is paced by the cluster's launches in
// flight (decisions/launch-poll-pacing.ts), which each poll reports. Deterministic as Durable Functions
// requires: time comes from currentUtcDateTime, spread from the instance ID, and every I/O (the count
// included) happens in activities. A slow launch polls up to its deadline: the monitor continues as new
// once an execution has yielded LAUNCH_MONITOR_TASKS_PER_EXECUTION tasks, carrying its poll count, poller
// state and pacing (the deadline counts from the input's startedAt, which never changes), so its history
// stays bounded (history-budget.ts).
import type * as df from 'durable-functions';
import { callThroughOutages, durableActivity, type DurableActivity } from '../durable-activity.js';
import type { NetworkPlugin, NetworkPluginMode } from '../../decisions/network-mode.js';
import type { Offering } from '../../decisions/offerings.js';
import type { CloudFailureInfo, CreationProgress } from '../../cloudprovider/types.js';
import { LaunchMonitorNames } from '../../runtime/function-names.js';
import { nextPollPacing, spreadMs } from '../../decisions/launch-poll-pacing.js';
import type { RelaunchProgress } from '../../decisions/launch-retry.js';
import type { PollPacing } from '../../decisions/launch-poll-pacing.js';
import { countingTasks, timerUntil, type TaskCount } from '../history-budget.js';

export interface MonitoredNodeClaim {
  name: string;
  uid: string;
  nodePool?: string;
}

export interface LaunchMonitorInput {
  nodeClaim: MonitoredNodeClaim;
  vmName: string;
  /** What was launched: the status's capacity comes from it, and a failure marks it unavailable. */
  offering: Offering;
  maxPods?: number;
  osDiskSizeGB?: number;
  /** The cluster version and network plugin the node's reservations were computed for. */
  kubernetesVersion?: string;
  networkPlugin?: NetworkPlugin;
  networkPluginMode?: NetworkPluginMode;
  /** VM_MEMORY_OVERHEAD_PERCENT when it is not the default: the status's capacity is estimated with it. */
  vmMemoryOverheadFraction?: number;
  /** Serialized SDK poller; absent when the VM already existed, and the monitor then polls with GET. */
  pollerState?: string;
  startedAt: string;
  /** The shortest wait between polls (and before the first), when few launches are in flight. */
  pollIntervalSeconds: number;
  /** The wait while ARM reports its throttling budget running low. */
  maxPollIntervalSeconds: number;
  deadlineMinutes: number;
  /** The cluster's launches in flight when this one started, which paces its first poll. */
  inFlightLaunches?: number;
  /** Relaunches of this NodeClaim before this launch (after transient LRO failures); absent = none. */
  retries?: number;
  /** Where the previous execution left off; absent in the first one. */
  continued?: LaunchMonitorProgress;
}

/** What one execution of the monitor hands the next over continue-as-new. */
export interface LaunchMonitorProgress {
  /** Polls so far, over every execution (the spread of the next one is keyed by its number). */
  polls: number;
  pollerState?: string;
  inFlightLaunches: number;
  /** The wait before the next poll, as the last poll's answer set it. */
  pacing: PollPacing;
  /** Set while a failed VM is being deleted for a relaunch: the failure being recorded. */
  relaunching?: CloudFailureInfo;
  continuations: number;
}

/**
 * Tasks (timers and activity calls) one execution yields before it continues as new. A poll is two tasks
 * (the wait, the poll), so this is 50 polls: most VMs are created well within that (a few minutes at the
 * 5 s minimum interval), so most monitors never continue, while one polling to a 15-minute deadline
 * (180 polls at 5 s) keeps each execution near 400 events instead of ~1,500.
 */
export const LAUNCH_MONITOR_TASKS_PER_EXECUTION = 100;

export interface PollVmCreationInput {
  vmName: string;
  pollerState?: string;
}

/** The cloud provider's answer, with the cluster's launches in flight when the activity could count them. */
export type PollVmCreationResult =
  | (Extract<CreationProgress, { status: 'InProgress' }> & { inFlightLaunches?: number })
  | Exclude<CreationProgress, { status: 'InProgress' }>;

export interface RecordLaunchFailureInput {
  monitor: LaunchMonitorInput;
  error: CloudFailureInfo;
  timedOut: boolean;
}

/** What the failure activity did: recorded the failure (nothing), or handed the NodeClaim to a relaunch. */
export type RecordLaunchFailureResult = { relaunch: RelaunchProgress } | null | undefined;

export type LaunchMonitorOutput =
  | { outcome: 'Launched'; polls: number }
  | { outcome: 'Relaunching'; polls: number; code?: string }
  | { outcome: 'Failed'; polls: number; code?: string }
  | { outcome: 'TimedOut'; polls: number };

/** The monitor's activities: one descriptor each gives their registration and the typed calls below. */
export const LaunchMonitorActivities = {
  pollVmCreation: durableActivity<PollVmCreationInput, PollVmCreationResult>(
    LaunchMonitorNames.pollVmCreation,
  ),
  recordLaunchSuccess: durableActivity<LaunchMonitorInput>(LaunchMonitorNames.recordLaunchSuccess),
  recordLaunchFailure: durableActivity<RecordLaunchFailureInput, RecordLaunchFailureResult>(
    LaunchMonitorNames.recordLaunchFailure,
  ),
};

export { launchMonitorInstanceId, launchMonitorInstanceIds } from '../launch-monitor-ids.js';

export function* launchMonitorOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, LaunchMonitorOutput | undefined, unknown> {
  const { continued, ...input } = context.df.getInput<LaunchMonitorInput>();
  const deadline = Date.parse(input.startedAt) + input.deadlineMinutes * 60_000;
  const limits = { minSeconds: input.pollIntervalSeconds, maxSeconds: input.maxPollIntervalSeconds };
  let pacing = continued?.pacing ?? nextPollPacing({ inFlightLaunches: input.inFlightLaunches ?? 1 }, limits);
  let inFlightLaunches = continued?.inFlightLaunches ?? input.inFlightLaunches ?? 1;
  let pollerState = continued ? continued.pollerState : input.pollerState;
  const count: TaskCount = { tasks: 0 };
  const call = <I, O>(activity: DurableActivity<I, O>, activityInput: I) =>
    countingTasks(count, callThroughOutages(context, activity, activityInput));
  /** Continues as new once this execution has used its budget (then the generator must return). */
  const continuedAsNew = (state: Omit<LaunchMonitorProgress, 'continuations'>): boolean => {
    if (count.tasks < LAUNCH_MONITOR_TASKS_PER_EXECUTION) return false;
    const next: LaunchMonitorInput = {
      ...input,
      continued: { ...state, continuations: (continued?.continuations ?? 0) + 1 },
    };
    context.df.continueAsNew(next);
    return true;
  };

  // A transient failure: the activity deletes the VM and is called again until it is gone, then lets
  // launch launch the NodeClaim again.
  function* relaunch(
    polls: number,
    error: CloudFailureInfo,
  ): Generator<df.Task, LaunchMonitorOutput | undefined, unknown> {
    const failure: RecordLaunchFailureInput = { monitor: input, error, timedOut: false };
    const code = error.code ? { code: error.code } : {};
    for (;;) {
      const next = context.df.currentUtcDateTime.getTime() + input.pollIntervalSeconds * 1000;
      yield* countingTasks(count, timerUntil(context, new Date(next)));
      const recorded = yield* call(LaunchMonitorActivities.recordLaunchFailure, failure);
      if (recorded?.relaunch !== 'VmDeleting') return { outcome: 'Relaunching', polls, ...code };
      if (
        continuedAsNew({
          polls,
          ...(pollerState ? { pollerState } : {}),
          inFlightLaunches,
          pacing,
          relaunching: error,
        })
      )
        return undefined;
    }
  }

  if (continued?.relaunching) return yield* relaunch(continued.polls, continued.relaunching);

  for (let polls = (continued?.polls ?? 0) + 1; ; polls++) {
    const now = context.df.currentUtcDateTime.getTime();
    const intervalMs = pacing.seconds * 1000;
    const plannedMs = pacing.spread ? spreadMs(intervalMs, context.df.instanceId, polls) : intervalMs;
    const waitMs = Math.min(plannedMs, deadline - now);
    if (waitMs > 0) yield* countingTasks(count, timerUntil(context, new Date(now + waitMs)));

    const pollInput: PollVmCreationInput = { vmName: input.vmName, ...(pollerState ? { pollerState } : {}) };
    const poll = yield* call(LaunchMonitorActivities.pollVmCreation, pollInput);

    if (poll.status === 'Succeeded') {
      yield* call(LaunchMonitorActivities.recordLaunchSuccess, input);
      return { outcome: 'Launched', polls };
    }
    if (poll.status === 'Failed') {
      const failure: RecordLaunchFailureInput = { monitor: input, error: poll.error, timedOut: false };
      const code = poll.error.code ? { code: poll.error.code } : {};
      const recorded = yield* call(LaunchMonitorActivities.recordLaunchFailure, failure);
      if (!recorded) return { outcome: 'Failed', polls, ...code };
      if (recorded.relaunch !== 'VmDeleting') return { outcome: 'Relaunching', polls, ...code };
      return yield* relaunch(polls, poll.error);
    }
    if (context.df.currentUtcDateTime.getTime() >= deadline) {
      const failure: RecordLaunchFailureInput = {
        monitor: input,
        error: { message: `The VM was not created within ${input.deadlineMinutes} minutes` },
        timedOut: true,
      };
      yield* call(LaunchMonitorActivities.recordLaunchFailure, failure);
      return { outcome: 'TimedOut', polls };
    }
    pollerState = poll.pollerState ?? pollerState;
    inFlightLaunches = poll.inFlightLaunches ?? inFlightLaunches;
    pacing = nextPollPacing(
      {
        inFlightLaunches,
        ...(poll.retryAfterSeconds !== undefined ? { retryAfterSeconds: poll.retryAfterSeconds } : {}),
        ...(poll.rateLimitRemaining !== undefined ? { rateLimitRemaining: poll.rateLimitRemaining } : {}),
      },
      limits,
    );
    if (continuedAsNew({ polls, ...(pollerState ? { pollerState } : {}), inFlightLaunches, pacing }))
      return undefined;
  }
}
