// The launch monitor orchestration: wait on a durable timer, poll the VM's long-running operation once
// through an activity, repeat until ARM reports an outcome or the deadline passes, then record the outcome
// on the NodeClaim through another activity. The wait between polls is paced by the cluster's launches in
// flight (decisions/launch-poll-pacing.ts), which each poll reports. Deterministic as Durable Functions
// requires: time comes from currentUtcDateTime, spread from the instance ID, and every I/O (the count
// included) happens in activities.
import type * as df from 'durable-functions';
import { callThroughOutages, durableActivity } from '../durable-activity.js';
import type { ArmErrorInfo } from '../../azure/virtual-machines.js';
import type { NetworkPlugin, NetworkPluginMode } from '../../decisions/network-mode.js';
import type { Offering } from '../../decisions/offerings.js';
import type { CreationProgress } from '../../cloudprovider/types.js';
import { LaunchMonitorNames } from '../../runtime/function-names.js';
import { nextPollPacing, spreadMs } from '../../decisions/launch-poll-pacing.js';
import type { RelaunchProgress } from '../../decisions/launch-retry.js';

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
}

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
  error: ArmErrorInfo;
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
): Generator<df.Task, LaunchMonitorOutput, unknown> {
  const input = context.df.getInput<LaunchMonitorInput>();
  const deadline = Date.parse(input.startedAt) + input.deadlineMinutes * 60_000;
  const limits = { minSeconds: input.pollIntervalSeconds, maxSeconds: input.maxPollIntervalSeconds };
  let pacing = nextPollPacing({ inFlightLaunches: input.inFlightLaunches ?? 1 }, limits);
  let inFlightLaunches = input.inFlightLaunches ?? 1;
  let pollerState = input.pollerState;

  for (let polls = 1; ; polls++) {
    const now = context.df.currentUtcDateTime.getTime();
    const intervalMs = pacing.seconds * 1000;
    const plannedMs = pacing.spread ? spreadMs(intervalMs, context.df.instanceId, polls) : intervalMs;
    const waitMs = Math.min(plannedMs, deadline - now);
    if (waitMs > 0) yield context.df.createTimer(new Date(now + waitMs));

    const pollInput: PollVmCreationInput = { vmName: input.vmName, ...(pollerState ? { pollerState } : {}) };
    const poll = yield* callThroughOutages(context, LaunchMonitorActivities.pollVmCreation, pollInput);

    if (poll.status === 'Succeeded') {
      yield* callThroughOutages(context, LaunchMonitorActivities.recordLaunchSuccess, input);
      return { outcome: 'Launched', polls };
    }
    if (poll.status === 'Failed') {
      const failure: RecordLaunchFailureInput = { monitor: input, error: poll.error, timedOut: false };
      const code = poll.error.code ? { code: poll.error.code } : {};
      let recorded = yield* callThroughOutages(context, LaunchMonitorActivities.recordLaunchFailure, failure);
      if (!recorded) return { outcome: 'Failed', polls, ...code };
      // A transient failure: the activity deletes the VM and is called again until it is gone, then lets
      // launch launch the NodeClaim again.
      while (recorded?.relaunch === 'VmDeleting') {
        const next = context.df.currentUtcDateTime.getTime() + input.pollIntervalSeconds * 1000;
        yield context.df.createTimer(new Date(next));
        recorded = yield* callThroughOutages(context, LaunchMonitorActivities.recordLaunchFailure, failure);
      }
      return { outcome: 'Relaunching', polls, ...code };
    }
    if (context.df.currentUtcDateTime.getTime() >= deadline) {
      const failure: RecordLaunchFailureInput = {
        monitor: input,
        error: { message: `The VM was not created within ${input.deadlineMinutes} minutes` },
        timedOut: true,
      };
      yield* callThroughOutages(context, LaunchMonitorActivities.recordLaunchFailure, failure);
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
  }
}
