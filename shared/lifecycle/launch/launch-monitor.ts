// The launch monitor orchestration: wait on a durable timer, poll the VM's long-running operation once
// through an activity, repeat until ARM reports an outcome or the deadline passes, then record the outcome
// on the NodeClaim through another activity. The wait between polls is paced by the cluster's launches in
// flight (decisions/launch-poll-pacing.ts), which each poll reports. Deterministic as Durable Functions
// requires: time comes from currentUtcDateTime, spread from the instance ID, and every I/O (the count
// included) happens in activities. A slow launch polls up to its deadline: the monitor continues as new
// once an execution has yielded LAUNCH_MONITOR_TASKS_PER_EXECUTION tasks, carrying its poll count, poller
// state and pacing (the deadline counts from the input's startedAt, which never changes), so its history
// stays bounded (../durable/history-budget.ts). The cloud provider classifies a failure and gave the node's
// resources at create, so the input carries nothing cloud-specific; inputs and poll answers an earlier
// version persisted (the sizing fields, an unclassified failure) are still read, so a host restarted
// mid-launch carries on.
import type * as df from 'durable-functions';
import { callThroughOutages, durableActivity, type DurableActivity } from '../durable/durable-activity.js';
import type { Offering } from '../../decisions/offerings.js';
import type {
  CloudFailureInfo,
  LaunchFailure,
  LaunchProgress,
  NodeResources,
} from '../../cloudprovider/types.js';
import { LaunchMonitorNames } from '../../runtime/function-names.js';
import { nextPollPacing, spreadMs } from '../../decisions/launch-poll-pacing.js';
import type { RelaunchProgress } from '../../decisions/launch-retry.js';
import type { PollPacing } from '../../decisions/launch-poll-pacing.js';
import { countingTasks, timerUntil, type TaskCount } from '../durable/history-budget.js';

export interface MonitoredNodeClaim {
  name: string;
  uid: string;
  nodePool?: string;
}

export interface LaunchMonitorInput {
  nodeClaim: MonitoredNodeClaim;
  vmName: string;
  /** What was launched: a failure marks it unavailable. */
  offering: Offering;
  /**
   * The capacity and allocatable the status records, as the cloud provider gave them at create. Absent
   * in an input an earlier version wrote, which carried the sizing instead (recordedResourcesOf).
   */
  resources?: NodeResources;
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
  /**
   * Set while a failed VM is being deleted for a relaunch: the failure being recorded (as the cloud
   * reported it, unclassified, when an earlier version continued).
   */
  relaunching?: LaunchFailure | CloudFailureInfo;
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

/**
 * The cloud provider's answer, with the cluster's launches in flight when the activity could count them;
 * or, replayed from a history an earlier version wrote, a failure as the cloud reported it.
 */
export type PollVmCreationResult =
  | (Extract<LaunchProgress, { status: 'InProgress' }> & { inFlightLaunches?: number })
  | Exclude<LaunchProgress, { status: 'InProgress' }>
  | { status: 'Failed'; error: CloudFailureInfo };

export interface RecordLaunchFailureInput {
  monitor: LaunchMonitorInput;
  /** The failure as the cloud provider classified it; absent when the launch timed out. */
  failure?: LaunchFailure;
  /** The failure as the cloud reported it, in an input an earlier version wrote. */
  error?: CloudFailureInfo;
  timedOut: boolean;
}

/** A failure as a poll answered it: classified by the provider, or as an earlier version recorded it. */
type ReportedFailure = { failure: LaunchFailure } | { error: CloudFailureInfo };

/** A failed poll's failure, in whichever shape it was answered. */
function reportedFailure(poll: Extract<PollVmCreationResult, { status: 'Failed' }>): ReportedFailure {
  return 'failure' in poll ? { failure: poll.failure } : { error: poll.error };
}

/** A failure being relaunched, as continue-as-new carried it (classified, or an earlier version's report). */
function relaunchingFailure(relaunching: LaunchFailure | CloudFailureInfo): ReportedFailure {
  return 'reason' in relaunching ? { failure: relaunching } : { error: relaunching };
}

function codeOf(reported: ReportedFailure): { code?: string } {
  const code = 'failure' in reported ? reported.failure.cloudCode : reported.error.code;
  return code ? { code } : {};
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

export { launchMonitorInstanceId, launchMonitorInstanceIds } from '../durable/launch-monitor-ids.js';

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
    reported: ReportedFailure,
  ): Generator<df.Task, LaunchMonitorOutput | undefined, unknown> {
    const failure: RecordLaunchFailureInput = { monitor: input, ...reported, timedOut: false };
    const code = codeOf(reported);
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
          relaunching: 'failure' in reported ? reported.failure : reported.error,
        })
      )
        return undefined;
    }
  }

  if (continued?.relaunching)
    return yield* relaunch(continued.polls, relaunchingFailure(continued.relaunching));

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
      const reported = reportedFailure(poll);
      const failure: RecordLaunchFailureInput = { monitor: input, ...reported, timedOut: false };
      const code = codeOf(reported);
      const recorded = yield* call(LaunchMonitorActivities.recordLaunchFailure, failure);
      if (!recorded) return { outcome: 'Failed', polls, ...code };
      if (recorded.relaunch !== 'VmDeleting') return { outcome: 'Relaunching', polls, ...code };
      return yield* relaunch(polls, reported);
    }
    if (context.df.currentUtcDateTime.getTime() >= deadline) {
      const failure: RecordLaunchFailureInput = { monitor: input, timedOut: true };
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
