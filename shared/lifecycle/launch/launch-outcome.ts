// The activities behind the launch monitor: poll the VM's creation once (the first version) or for as long
// as one activity may wait (the second, recording success within the poll that sees it), and record the
// outcome on the NodeClaim. A failure is written as Launched=False with a stable reason and Azure's message *before* the
// NodeClaim is deleted, so the reason is visible on the object, in its events, in logs and in metrics.
import type { Offering } from '../../decisions/offerings.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import { decideLroFailure, MAX_LAUNCH_RETRIES } from '../../decisions/launch-retry.js';
import { handOffToRelaunch } from './launch-relaunch.js';
import { countCreateError, countLaunchAttempt } from './create-error-metric.js';
import { ConditionTypes } from '../../models/karpenter.js';
import { recordNodeClaimTransition } from '../../observability/nodeclaim-status-metrics.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type {
  LaunchMonitorInput,
  MonitoredNodeClaim,
  PollVmCreationInput,
  PollVmCreationResult,
  RecordLaunchFailureInput,
  RecordLaunchFailureResult,
} from './launch-monitor.js';
import { nodeClaimAfter, nodeClaimTarget, writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { nextPollPacing } from '../../decisions/launch-poll-pacing.js';
import { realActivityTimer, type ActivityTimer } from '../durable/activity-wait.js';
import { plannedWaitMs, type AwaitVmCreationInput, type AwaitVmCreationResult } from './launch-monitor-v2.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import { wakeReplacementCommand } from '../nodeclaims/replacement-wake.js';
import type { ClusterReader } from '../../kube/cluster-reader.js';
import {
  describeLaunchFailure,
  launchTimeoutFailure,
  type CloudProvider,
  type LaunchFailure,
} from '../../cloudprovider/types.js';

export async function pollVmCreation(
  deps: Pick<LifecycleDependencies, 'log'> & {
    cloud: Pick<CloudProvider, 'pollLaunch'>;
    cluster: Pick<ClusterReader, 'launchesInFlight'>;
  },
  input: PollVmCreationInput,
): Promise<PollVmCreationResult> {
  const result = await deps.cloud.pollLaunch(input.vmName, input.pollerState);
  if (result.status !== 'InProgress') return result;
  const inFlightLaunches = await countLaunchesInFlight(deps);
  return inFlightLaunches === undefined ? result : { ...result, inFlightLaunches };
}

/**
 * The second version's wait (launch-monitor-v2.ts): polls the creation at the monitor's pace until ARM
 * reports an outcome, the deadline comes, or the next wait would leave the window. Success is recorded
 * here, in the call that sees it; a failure is answered at once, classified, for the orchestration to
 * record (and perhaps relaunch), as the first version does. A transient error of any request fails the
 * call as one answer (outage-retry.ts), and the orchestration calls again after its wait, from the state
 * it handed this call: every poll and the success's write are idempotent.
 */
export async function awaitVmCreation(
  deps: LifecycleDependencies,
  input: AwaitVmCreationInput,
  timer: ActivityTimer = realActivityTimer(),
): Promise<AwaitVmCreationResult> {
  const { monitor } = input;
  const limits = { minSeconds: monitor.pollIntervalSeconds, maxSeconds: monitor.maxPollIntervalSeconds };
  const deadline = Date.parse(input.deadline);
  const windowMs = input.windowSeconds * 1000;
  let { pollerState, inFlightLaunches, polls } = input;
  let waitMs = input.firstWaitMs;
  for (;;) {
    if (waitMs > 0) await timer.sleep(waitMs);
    polls += 1;
    const poll = await deps.cloud.pollLaunch(monitor.vmName, pollerState);
    if (poll.status === 'Succeeded') {
      await recordLaunchSuccess(deps, monitor);
      return { status: 'Launched', polls };
    }
    if (poll.status === 'Failed') return { status: 'Failed', failure: poll.failure, polls };
    pollerState = poll.pollerState ?? pollerState;
    inFlightLaunches = (await countLaunchesInFlight(deps)) ?? inFlightLaunches;
    const pacing = nextPollPacing(
      {
        inFlightLaunches,
        ...(poll.retryAfterSeconds !== undefined ? { retryAfterSeconds: poll.retryAfterSeconds } : {}),
        ...(poll.rateLimitRemaining !== undefined ? { rateLimitRemaining: poll.rateLimitRemaining } : {}),
      },
      limits,
    );
    const now = deps.now().getTime();
    waitMs = Math.min(plannedWaitMs(pacing, input.spreadKey, polls + 1), deadline - now);
    if (now >= deadline || timer.elapsedMs() + waitMs > windowMs) {
      return {
        status: 'InProgress',
        polls,
        ...(pollerState ? { pollerState } : {}),
        inFlightLaunches,
        pacing,
      };
    }
  }
}

/** The pacing input; without it the monitor keeps its last count, so a failed count is only logged. */
async function countLaunchesInFlight(
  deps: Pick<LifecycleDependencies, 'log'> & { cluster: Pick<ClusterReader, 'launchesInFlight'> },
): Promise<number | undefined> {
  try {
    return await deps.cluster.launchesInFlight();
  } catch (error) {
    deps.log.warn('could not count the launches in flight; polling keeps its last pace', { error });
    return undefined;
  }
}

export async function recordLaunchSuccess(
  deps: LifecycleDependencies,
  input: LaunchMonitorInput,
): Promise<void> {
  const log = deps.log.with({ nodeClaim: input.nodeClaim.name, nodeClaimUid: input.nodeClaim.uid });
  const vm = await deps.cloud.get(input.vmName);
  const nodeClaim = await deps.objects.nodeClaims.get(input.nodeClaim.name);
  if (!nodeClaim || nodeClaim.metadata.uid !== input.nodeClaim.uid) {
    log.info('VM created for a NodeClaim that no longer exists; termination removes it', {
      vmName: input.vmName,
    });
    return;
  }
  const { capacity, allocatable } = input.resources ?? deps.cloud.recordedResourcesOf(input.offering, input);
  const imageID = vm?.imageID;
  const written = nodeClaimAfter(
    await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
      status: {
        ...current.status,
        ...(imageID ? { imageID } : {}),
        capacity,
        allocatable,
        conditions: applyLifecycleConditions(
          current.status?.conditions,
          [{ type: ConditionTypes.launched, status: 'True', reason: 'Launched', message: '' }],
          deps.now(),
        ),
      },
    })),
  );
  const pool = { nodepool: input.nodeClaim.nodePool ?? '' };
  recordNodeClaimTransition(deps.metrics, written ?? nodeClaim, {
    type: ConditionTypes.launched,
    status: 'True',
    reason: 'Launched',
    previousStatus: 'Unknown',
    previousSince: undefined,
    at: deps.now(),
  });
  countLaunchAttempt(deps, input.nodeClaim.nodePool, 'succeeded');
  deps.metrics.observe(
    'karpenter_nodeclaims_instance_creation_duration_seconds',
    (deps.now().getTime() - Date.parse(input.startedAt)) / 1000,
    pool,
  );
  log.info('VM provisioned', { vmName: input.vmName, imageID });
}

/**
 * The monitor's failure: a transient one (the same that a PUT would retry) hands the NodeClaim to a
 * relaunch, up to MAX_LAUNCH_RETRIES times; any other, or one past the bound, is recorded as the outcome.
 */
export async function recordMonitorFailure(
  deps: LifecycleDependencies,
  input: RecordLaunchFailureInput,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<RecordLaunchFailureResult> {
  const elapsedSeconds = (deps.now().getTime() - Date.parse(input.monitor.startedAt)) / 1000;
  const failure = input.timedOut
    ? launchTimeoutFailure(elapsedSeconds)
    : (input.failure ?? deps.cloud.launchFailureOf(input.error ?? { message: 'the launch failed' }));
  const decision = decideLroFailure({
    failure,
    timedOut: input.timedOut,
    retriesSoFar: input.monitor.retries ?? 0,
    maxRetries: MAX_LAUNCH_RETRIES,
  });
  if (decision.action === 'relaunch') {
    return { relaunch: await handOffToRelaunch(deps, input.monitor, failure, decision.message) };
  }
  await recordLaunchFailure(
    deps,
    {
      nodeClaim: input.monitor.nodeClaim,
      vmName: input.monitor.vmName,
      offering: input.monitor.offering,
      failure,
    },
    context,
  );
  return null;
}

/**
 * Launched=False with the reason and Azure's message, a Warning event, the offering marked unavailable
 * for the reason's TTL, the VM deleted (forced), then the NodeClaim deleted. Each step is idempotent, so
 * a retried activity converges to the same end state. A failure of every launch (failsEveryLaunch: a
 * refusal for want of a permission) keeps the NodeClaim, as a refused PUT does: a replacement would be refused alike, so it waits, visibly, until
 * liveness replaces it after the registration timeout (one attempt per NodeClaim, never a loop).
 */
export async function recordLaunchFailure(
  deps: LifecycleDependencies,
  input: { nodeClaim: MonitoredNodeClaim; vmName: string; offering: Offering; failure: LaunchFailure },
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<void> {
  const { failure, offering } = input;
  const log = deps.log.with({ nodeClaim: input.nodeClaim.name, nodeClaimUid: input.nodeClaim.uid });
  const message = describeLaunchFailure(failure);

  const nodeClaim = await deps.objects.nodeClaims.get(input.nodeClaim.name);
  const current = nodeClaim && nodeClaim.metadata.uid === input.nodeClaim.uid ? nodeClaim : undefined;
  if (current) {
    await writeNodeClaim(deps.objects, current, (latest) => ({
      status: {
        ...latest.status,
        conditions: applyLifecycleConditions(
          latest.status?.conditions,
          [{ type: ConditionTypes.launched, status: 'False', reason: failure.reason, message }],
          deps.now(),
        ),
      },
    }));
    await deps.events.warning(nodeClaimTarget(current), failure.reason, message);
    // A disruption command waiting for this NodeClaim as its replacement abandons now, not at its fallback.
    await wakeReplacementCommand(context.orchestrations, log, current, 'Failed');
  }

  const remembered = await deps.cloud.rememberLaunchFailure(offering, failure);
  const vmState = await deps.cloud.delete(input.vmName);
  countCreateError(deps, input.nodeClaim.nodePool, failure.reason);
  countLaunchAttempt(deps, input.nodeClaim.nodePool, 'failed');
  log.warn('launch failed', {
    reason: failure.reason,
    azureCode: failure.cloudCode,
    detail: failure.message,
    offering: `${offering.capacityType}/${offering.vmSize}/${offering.zone}`,
    unavailable: remembered?.blocks,
    unavailableSeconds: remembered?.ttlSeconds,
    vmName: input.vmName,
    vm: vmState,
  });
  if (current && !failure.failsEveryLaunch) await deleteNodeClaim(deps, current, context);
}
