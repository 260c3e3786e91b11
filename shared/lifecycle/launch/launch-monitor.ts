// The launch monitor orchestration: wait on a durable timer, poll the VM's long-running operation once
// through an activity, repeat until ARM reports an outcome or the deadline passes, then record the outcome
// on the NodeClaim through another activity. Deterministic as Durable Functions requires: time comes from
// currentUtcDateTime, jitter from the instance ID, and every I/O happens in activities.
import type * as df from 'durable-functions';
import type { ArmErrorInfo } from '../../azure/virtual-machines.js';
import type { NetworkPlugin, NetworkPluginMode } from '../../decisions/node-reservations.js';
import type { Offering } from '../../decisions/offerings.js';
import { LaunchMonitorNames } from '../../runtime/function-names.js';

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
  pollIntervalSeconds: number;
  maxPollIntervalSeconds: number;
  deadlineMinutes: number;
}

export interface PollVmCreationInput {
  vmName: string;
  pollerState?: string;
}

export type PollVmCreationResult =
  | {
      status: 'InProgress';
      pollerState?: string;
      retryAfterSeconds?: number;
      /** The fewest requests ARM said were left in a short throttling window (x-ms-ratelimit-remaining-resource). */
      rateLimitRemaining?: number;
    }
  | { status: 'Succeeded' }
  | { status: 'Failed'; error: ArmErrorInfo };

export interface RecordLaunchFailureInput {
  monitor: LaunchMonitorInput;
  error: ArmErrorInfo;
  timedOut: boolean;
}

export type LaunchMonitorOutput =
  | { outcome: 'Launched'; polls: number }
  | { outcome: 'Failed'; polls: number; code?: string }
  | { outcome: 'TimedOut'; polls: number };

export const MIN_POLL_INTERVAL_SECONDS = 1;

export const launchMonitorInstanceId = (nodeClaimUid: string): string => `launch-${nodeClaimUid}`;

export function* launchMonitorOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, LaunchMonitorOutput, unknown> {
  const input = context.df.getInput<LaunchMonitorInput>();
  const deadline = Date.parse(input.startedAt) + input.deadlineMinutes * 60_000;
  let intervalSeconds = input.pollIntervalSeconds;
  let pollerState = input.pollerState;

  for (let polls = 1; ; polls++) {
    const now = context.df.currentUtcDateTime.getTime();
    const waitMs = Math.min(jittered(intervalSeconds * 1000, context.df.instanceId, polls), deadline - now);
    if (waitMs > 0) yield context.df.createTimer(new Date(now + waitMs));

    const pollInput: PollVmCreationInput = { vmName: input.vmName, ...(pollerState ? { pollerState } : {}) };
    const poll = (yield context.df.callActivity(
      LaunchMonitorNames.pollVmCreation,
      pollInput,
    )) as PollVmCreationResult;

    if (poll.status === 'Succeeded') {
      yield context.df.callActivity(LaunchMonitorNames.recordLaunchSuccess, input);
      return { outcome: 'Launched', polls };
    }
    if (poll.status === 'Failed') {
      const failure: RecordLaunchFailureInput = { monitor: input, error: poll.error, timedOut: false };
      yield context.df.callActivity(LaunchMonitorNames.recordLaunchFailure, failure);
      return { outcome: 'Failed', polls, ...(poll.error.code ? { code: poll.error.code } : {}) };
    }
    if (context.df.currentUtcDateTime.getTime() >= deadline) {
      const failure: RecordLaunchFailureInput = {
        monitor: input,
        error: { message: `The VM was not created within ${input.deadlineMinutes} minutes` },
        timedOut: true,
      };
      yield context.df.callActivity(LaunchMonitorNames.recordLaunchFailure, failure);
      return { outcome: 'TimedOut', polls };
    }
    pollerState = poll.pollerState ?? pollerState;
    intervalSeconds = nextPollIntervalSeconds(intervalSeconds, poll, input.maxPollIntervalSeconds);
  }
}

/**
 * Below this many requests left in ARM's short throttling window, polls slow down to the maximum
 * interval: launches in flight then yield the operation-status budget before ARM starts refusing it.
 */
export const RATE_LIMIT_LOW_WATERMARK = 1_500;

/**
 * The wait before the next poll: the previous interval grown by half (polls get sparser as an LRO ages,
 * since most failures come early), never shorter than ARM's Retry-After, at most the maximum interval
 * unless Retry-After asks for more, and the maximum outright while ARM reports its rate limit running low.
 */
export function nextPollIntervalSeconds(
  previousSeconds: number,
  poll: { retryAfterSeconds?: number; rateLimitRemaining?: number },
  maxSeconds: number,
): number {
  const grown = Math.min(previousSeconds * 1.5, maxSeconds);
  const underPressure =
    poll.rateLimitRemaining !== undefined && poll.rateLimitRemaining < RATE_LIMIT_LOW_WATERMARK;
  return Math.max(underPressure ? maxSeconds : grown, poll.retryAfterSeconds ?? 0, MIN_POLL_INTERVAL_SECONDS);
}

/**
 * Spreads polls of many concurrent launches over the interval plus up to 25% so they do not hit ARM's
 * operation-status limits in lockstep, and never poll sooner than asked (Retry-After is a floor).
 * Derived from the instance ID, so replays compute the same value.
 */
export function jittered(intervalMs: number, instanceId: string, attempt: number): number {
  let hash = 2166136261;
  for (const char of `${instanceId}#${attempt}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 16777619);
  }
  const unit = (hash >>> 0) / 0xffffffff;
  return Math.round(intervalMs * (1 + 0.25 * unit));
}
