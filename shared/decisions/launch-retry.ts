// Whether a launch that ARM failed in its long-running operation is launched again on the same NodeClaim.
// A transient error (a server-side failure code) is retried wherever ARM reports it: on the PUT, the launch
// message is retried; in the LRO, the failed VM is deleted and the same NodeClaim launched again, a bounded
// number of times, after which the failure stands as for any other error. Pure: plain data in and out.
import { describeLaunchFailure, type LaunchFailure } from '../cloudprovider/types.js';

/** Relaunches of one NodeClaim after transient LRO failures; the next one fails the NodeClaim. */
export const MAX_LAUNCH_RETRIES = 2;

/** How many relaunches a NodeClaim has had; the launch monitor of each relaunch is keyed by it. */
export const LAUNCH_RETRIES_ANNOTATION = 'karpenter.azure.com/launch-retries';

/** The Launched=Unknown reason while the failed VM is deleted and the NodeClaim waits to launch again. */
export const LAUNCH_RETRYING_REASON = 'LaunchRetrying';

/** Where the failure activity left a hand-off: the failed VM still being deleted, or the NodeClaim released. */
export type RelaunchProgress = 'VmDeleting' | 'HandedOff';

export type LroFailureDecision = { action: 'relaunch'; retry: number; message: string } | { action: 'fail' };

/** A failure the LRO reported (not our deadline) that a later attempt may not meet is relaunched. */
export function decideLroFailure(input: {
  failure: LaunchFailure;
  timedOut: boolean;
  retriesSoFar: number;
  maxRetries: number;
}): LroFailureDecision {
  const { failure, timedOut, retriesSoFar, maxRetries } = input;
  if (timedOut || !failure.retryable || retriesSoFar >= maxRetries) return { action: 'fail' };
  const retry = retriesSoFar + 1;
  const cause = describeLaunchFailure(failure);
  return {
    action: 'relaunch',
    retry,
    message: `${cause} (transient); deleting the failed VM and launching again, retry ${retry} of ${maxRetries}`,
  };
}

/** The count in the annotation; anything but a non-negative integer counts as none. */
export function launchRetriesOf(annotations: Record<string, string> | undefined): number {
  const value = annotations?.[LAUNCH_RETRIES_ANNOTATION];
  if (value === undefined || !/^\d+$/.test(value)) return 0;
  return Number(value);
}

/**
 * Where the hand-off from a failed VM to the relaunch stands, seen by the monitor of relaunch `monitorRetries`
 * (its activity may run again after a crash at any line):
 * - `hand-off`: nothing done yet or the VM still being deleted; mark, delete, then count the retry.
 * - `release`: counted, but the providerID of the failed VM is still set; clear it so launch runs again.
 * - `done`: released (launch may already have launched again, with its own monitor), or the NodeClaim went
 *   on without this monitor (deleted, or a later relaunch): nothing left for this monitor to do.
 */
export function relaunchStage(
  nodeClaim: { retries: number; providerID?: string; launchedReason?: string; deleting: boolean },
  monitorRetries: number,
): 'hand-off' | 'release' | 'done' {
  if (nodeClaim.deleting) return 'done';
  if (nodeClaim.retries === monitorRetries) return 'hand-off';
  const counted = nodeClaim.retries === monitorRetries + 1;
  // Launch writes VMProvisioning with the new providerID, so LaunchRetrying with a providerID is ours.
  if (counted && nodeClaim.providerID && nodeClaim.launchedReason === LAUNCH_RETRYING_REASON)
    return 'release';
  return 'done';
}
