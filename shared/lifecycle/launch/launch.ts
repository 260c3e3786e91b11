// Launch, the first lifecycle phase: for a NodeClaim without a providerID, resolve its classes, ask the
// cloud provider for a plan (the VM to adopt, or the offering and image to create one on), claim the
// NodeClaim for it (finalizer, the offering's labels), take a reservation's slot when the offering is
// reserved (reservation-seat.ts), have the cloud provider create the VM, and record the providerID as soon
// as Azure has accepted it. The launch monitor orchestration takes it from there. Every NodeClaim write
// goes through the one writer (../nodeclaims/nodeclaim-writes.ts). The Azure work (offering choice,
// image, bootstrap token, the create-only PUT, adoption) is behind the cloud provider
// (shared/cloudprovider/); this file is conditions, finalizers, events and the monitor.
// Level-triggered: it reads the NodeClaim and converges, so duplicate, late and concurrent events are
// harmless. The resourceVersion-guarded claim only keeps deliveries that read the same version from
// deciding twice; the create-only PUT behind `create` is what keeps any two from creating the VM twice.
import { findCondition } from '../../decisions/conditions.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { hashAnnotations } from '../../decisions/hash.js';
import type { Offering } from '../../decisions/offerings.js';
import {
  LAUNCH_ATTEMPT_ANNOTATION,
  RESERVATION_CLAIMED_AT_ANNOTATION,
} from '../../decisions/launch-annotations.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import { validateRequirements } from '../../decisions/requirements.js';
import { isConflict } from '../../kube/errors.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../models/index.js';
import { ConditionTypes, WellKnown } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import {
  isAuthorizationError,
  isCreateError,
  isImageNotResolvedError,
  isInstanceExistsError,
  isInstanceNameConflictError,
  isInsufficientCapacityError,
  isReservationContendedError,
  describeLaunchFailure,
  type LaunchClasses,
  type LaunchFailure,
  type LaunchPlan,
  type Launched,
} from '../../cloudprovider/types.js';
import { countCreateError } from './create-error-metric.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { recordLaunchFailure } from './launch-outcome.js';
import { ensureLaunchMonitor, launchMonitorInput, startLaunchMonitor } from './launch-monitor-start.js';
import {
  nodeClaimTarget,
  wasWritten,
  writeNodeClaim,
  type NodeClaimWrite,
} from '../nodeclaims/nodeclaim-writes.js';
import { LaunchBlockReasons, type LaunchBlockReason } from './block-reasons.js';
import { takeReservationSeat } from './reservation-seat.js';
import { deleteNodeClaim } from '../termination/termination.js';

export type LaunchResult =
  | { action: 'skipped'; why: string }
  | { action: 'blocked'; reason: LaunchBlockReason; message: string }
  | { action: 'failed'; reason: string }
  | { action: 'launched'; vmName: string; providerID: string; offering: Offering; createdVm: boolean };

/** Thrown when another delivery of the same event is launching this NodeClaim right now; retry later. */
export class LaunchInProgressError extends Error {
  override readonly name = 'LaunchInProgressError';
}

async function blockForAuthorization(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  nodePoolName: string | undefined,
  failure: LaunchFailure,
): Promise<LaunchResult> {
  const message = describeLaunchFailure(failure);
  await blockLaunch(deps, nodeClaim, LaunchBlockReasons.authorizationFailed, message);
  countCreateError(deps, nodePoolName, failure.reason);
  deps.log.warn('launch blocked', {
    nodeClaim: nodeClaim.metadata.name,
    reason: failure.reason,
    azureCode: failure.cloudCode,
    detail: message,
  });
  return { action: 'blocked', reason: LaunchBlockReasons.authorizationFailed, message };
}

export async function reconcileLaunch(
  deps: LifecycleDependencies,
  name: string,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
  adopting = false,
  yieldedReservation = false,
): Promise<LaunchResult> {
  try {
    return await launchNodeClaim(deps, name, context, adopting, yieldedReservation);
  } catch (error) {
    // Azure refused a request for want of a permission (the PUT's own refusal is handled where it is
    // sent): the same request would be refused again, whatever event brought this NodeClaim here.
    if (!isAuthorizationError(error)) throw error;
    const nodeClaim = await deps.objects.nodeClaims.get(name);
    if (!nodeClaim || nodeClaim.status?.providerID || nodeClaim.metadata.deletionTimestamp) throw error;
    return blockForAuthorization(
      deps,
      nodeClaim,
      nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel],
      error.failure,
    );
  }
}

async function launchNodeClaim(
  deps: LifecycleDependencies,
  name: string,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
  adopting: boolean,
  yieldedReservation: boolean,
): Promise<LaunchResult> {
  const nodeClaim = await deps.objects.nodeClaims.get(name);
  if (!nodeClaim) return { action: 'skipped', why: 'NodeClaim not found' };
  if (!isManagedNodeClaim(nodeClaim))
    return { action: 'skipped', why: 'nodeClassRef is not an AKSNodeClass' };
  if (nodeClaim.metadata.deletionTimestamp) return { action: 'skipped', why: 'NodeClaim is being deleted' };
  const log = deps.log.with({ nodeClaim: name, nodeClaimUid: nodeClaim.metadata.uid });

  if (nodeClaim.status?.providerID) {
    await ensureLaunchMonitor(deps, nodeClaim, context);
    return { action: 'skipped', why: 'already launched' };
  }

  // Refused by Azure for want of a permission: the same PUT would be refused again, whatever event
  // brought this NodeClaim here; liveness replaces it after the registration timeout.
  const launchedCondition = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  if (
    launchedCondition?.status === 'False' &&
    launchedCondition.reason === LaunchBlockReasons.authorizationFailed
  )
    return { action: 'skipped', why: 'Azure refused the VM for want of a permission' };

  const resolved = await resolveClasses(deps, nodeClaim);
  if ('reason' in resolved) {
    await blockLaunch(deps, nodeClaim, resolved.reason, resolved.message);
    log.warn('launch blocked', { reason: resolved.reason, detail: resolved.message });
    return { action: 'blocked', ...resolved };
  }
  const { nodePool, nodeClass } = resolved;

  let plan: LaunchPlan;
  try {
    plan = await deps.cloud.plan(nodeClaim, resolved);
  } catch (error) {
    const blocked = isInstanceNameConflictError(error)
      ? LaunchBlockReasons.vmNameConflict
      : isImageNotResolvedError(error)
        ? LaunchBlockReasons.imageNotResolved
        : undefined;
    if (blocked && error instanceof Error) {
      await blockLaunch(deps, nodeClaim, blocked, error.message);
      log.warn('launch blocked', { reason: blocked, detail: error.message });
      return { action: 'blocked', reason: blocked, message: error.message };
    }
    if (isInsufficientCapacityError(error)) {
      await failWithoutOffering(deps, nodeClaim, error.message, context);
      return { action: 'failed', reason: 'InsufficientCapacity' };
    }
    throw error;
  }
  const { offering, vmName } = plan;

  const claimed = await claimLaunch(deps, nodeClaim, offering, nodePool, nodeClass, context.invocationId);
  if (!claimed) return { action: 'skipped', why: 'NodeClaim deleted during launch' };
  let launched: Launched;
  let seated: NodeClaim = claimed;
  try {
    // Other launches may have read the same free slot: the claimants agree on who takes it, and a
    // launch that does not plans again, where the slot now counts as taken.
    if (plan.kind === 'create' && offering.reservationId !== undefined) {
      const committed = await takeReservationSeat(deps, plan.reservations, offering.reservationId, claimed);
      if (!committed) return { action: 'skipped', why: 'NodeClaim deleted during launch' };
      seated = committed;
    }
    launched = await deps.cloud.create(seated, resolved, plan);
  } catch (error) {
    if (isReservationContendedError(error)) {
      // Another launch took the reservation slot this one read as free: choose again, where it counts
      // as taken; a second contention is retried later rather than chosen around again.
      if (yieldedReservation)
        throw new LaunchInProgressError(`reservation ${offering.reservationId} is contended; retrying`);
      log.info('reservation slot taken by another launch; choosing again', {
        reservation: offering.reservationId,
      });
      return launchNodeClaim(deps, name, context, adopting, true);
    }
    if (isInstanceExistsError(error)) {
      // The VM appeared between the plan and the PUT: adopt it from a fresh read of both, exactly as if
      // it had existed from the start (its offering, not ours, goes on the NodeClaim).
      if (adopting) throw new LaunchInProgressError(`VM ${vmName} is being created by another delivery`);
      log.info('VM created meanwhile by another delivery; adopting it', { vmName });
      return launchNodeClaim(deps, name, context, true, yieldedReservation);
    }
    if (isAuthorizationError(error)) {
      // ARM refused before creating anything; another offering would be refused alike. The NodeClaim
      // keeps waiting with the missing permission named, and no offering is marked unavailable.
      return blockForAuthorization(deps, seated, nodePool?.metadata.name, error.failure);
    }
    if (isCreateError(error)) {
      await recordLaunchFailure(
        deps,
        {
          nodeClaim: { name, uid: claimed.metadata.uid ?? '', ...poolOf(nodePool) },
          vmName,
          offering,
          failure: error.failure,
        },
        context,
      );
      return { action: 'failed', reason: error.failure.reason };
    }
    throw error;
  }
  return recordLaunched(deps, seated, { nodePool, nodeClass }, launched, context);
}

/** The providerID on the NodeClaim and the launch monitor started: Azure has accepted the VM. */
async function recordLaunched(
  deps: LifecycleDependencies,
  claimed: NodeClaim,
  { nodePool }: LaunchClasses,
  { vmName, providerID, offering, resources, created, pollerState }: Launched,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<LaunchResult> {
  const log = deps.log.with({ nodeClaim: claimed.metadata.name, nodeClaimUid: claimed.metadata.uid });
  const write = await writeNodeClaim(deps.objects, claimed, (current) => ({
    status: {
      ...current.status,
      providerID,
      conditions: applyLifecycleConditions(
        current.status?.conditions,
        [
          {
            type: ConditionTypes.launched,
            status: 'Unknown',
            reason: 'VMProvisioning',
            message: `VM ${vmName} (${offering.vmSize}, ${offering.zone || 'no zone'}, ${offering.capacityType}) accepted by Azure`,
          },
        ],
        deps.now(),
      ),
    },
  }));
  if (write.outcome === 'gone') {
    // The NodeClaim went away while the PUT was in flight; termination may already have looked for the
    // VM and found nothing, so the VM this launch created is removed here rather than left orphaned.
    await deps.cloud.delete(vmName);
    log.warn('NodeClaim deleted during launch; deleting its VM', { vmName });
    return { action: 'skipped', why: 'NodeClaim deleted during launch' };
  }
  const launched = write.nodeClaim;

  await startLaunchMonitor(
    deps,
    launched,
    context,
    launchMonitorInput(deps, launched, {
      vmName,
      offering,
      resources,
      ...(pollerState ? { pollerState } : {}),
      startedAt: deps.now().toISOString(),
    }),
  );
  // Counted once per NodeClaim: by the delivery that wrote its providerID, not by every one that got here.
  if (wasWritten(write) && !write.before.status?.providerID) {
    deps.metrics.increment('karpenter_nodeclaims_launch_started_total', {
      nodepool: nodePool?.metadata.name ?? '',
    });
  }
  log.info('VM accepted by Azure; launch monitor started', {
    vmName,
    providerID,
    offering: `${offering.capacityType}/${offering.vmSize}/${offering.zone}`,
    createdVm: created,
  });
  return { action: 'launched', vmName, providerID, offering, createdVm: created };
}

type Resolution =
  | { nodePool: NodePool | undefined; nodeClass: AKSNodeClass }
  | { reason: LaunchBlockReason; message: string };

async function resolveClasses(deps: LifecycleDependencies, nodeClaim: NodeClaim): Promise<Resolution> {
  const ref = nodeClaim.spec.nodeClassRef;
  const nodeClass = await deps.objects.nodeClasses.get(ref.name);
  if (!nodeClass) {
    return {
      reason: LaunchBlockReasons.nodeClassNotFound,
      message: `AKSNodeClass "${ref.name}" (spec.nodeClassRef.name) does not exist`,
    };
  }
  // Before anything is made for the node (its bootstrap token, its VM): a value that does not parse
  // would be pasted into the node's kubelet flags or configuration.
  const invalid = deps.cloud.nodeClassInvalidity(nodeClass);
  if (invalid !== undefined) {
    return {
      reason: LaunchBlockReasons.nodeClassInvalid,
      message: `AKSNodeClass "${ref.name}" is invalid: ${invalid}`,
    };
  }
  const nodePoolName = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
  let nodePool: NodePool | undefined;
  if (nodePoolName) {
    nodePool = await deps.objects.nodePools.get(nodePoolName);
    if (!nodePool) {
      return {
        reason: LaunchBlockReasons.nodePoolNotFound,
        message: `NodePool "${nodePoolName}" (label ${WellKnown.nodePoolLabel}) does not exist`,
      };
    }
  }
  const problems = validateRequirements(nodeClaim.spec.requirements, 'spec.requirements');
  if (problems.length > 0)
    return { reason: LaunchBlockReasons.invalidRequirements, message: problems.join('; ') };
  return { nodePool, nodeClass };
}

/** A NodeClaim that cannot launch yet (its classes are missing or invalid) keeps waiting, visibly. */
async function blockLaunch(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: LaunchBlockReason,
  message: string,
): Promise<void> {
  const before = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  await setLaunchedFalse(deps, nodeClaim, reason, message);
  if (before?.reason !== reason) await deps.events.warning(nodeClaimTarget(nodeClaim), reason, message);
}

async function failWithoutOffering(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  detail: string,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<void> {
  const message = `no offering satisfies the NodeClaim: ${detail}`;
  // The condition keeps the app's reason (upstream deletes the NodeClaim without a Launched=False); the
  // Event has upstream's reason for the same failure.
  await setLaunchedFalse(deps, nodeClaim, 'InsufficientCapacity', message);
  await deps.events.warning(nodeClaimTarget(nodeClaim), 'InsufficientCapacityError', message);
  // The counter's error value is upstream's GetErrorTypeLabelValue for this typed error.
  countCreateError(deps, nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel], 'InsufficientCapacityError');
  deps.log.warn('no offering fits; deleting NodeClaim', { nodeClaim: nodeClaim.metadata.name, detail });
  await deleteNodeClaim(deps, nodeClaim, context);
}

async function setLaunchedFalse(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: string,
  message: string,
): Promise<void> {
  await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    status: {
      ...current.status,
      conditions: applyLifecycleConditions(
        current.status?.conditions,
        [{ type: ConditionTypes.launched, status: 'False', reason, message }],
        deps.now(),
      ),
    },
  }));
}

/**
 * One resourceVersion-guarded write before the PUT: the termination finalizer (so a NodeClaim deleted
 * while its VM is being created still gets its VM removed), the offering's labels, the template hashes,
 * and a launch-attempt annotation. Of several deliveries that read the same version only one wins this
 * write; the others get LaunchInProgressError and are retried. A delivery that read a later version (the
 * winner's own write, say) may win too while the first one's PUT waits in the SDK's retries: the
 * create-only PUT, not this claim, is what keeps that second winner from creating or updating the VM twice.
 * A claim already stored as this attempt's (a retry of the same invocation) writes nothing and goes on.
 * Undefined when the NodeClaim is gone.
 */
async function claimLaunch(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  offering: Offering,
  nodePool: NodePool | undefined,
  nodeClass: AKSNodeClass,
  attempt: string,
): Promise<NodeClaim | undefined> {
  let claim: NodeClaimWrite;
  try {
    // Not retried on a conflict: of the deliveries that read the same version, one wins.
    claim = await writeNodeClaim(
      deps.objects,
      nodeClaim,
      (current) => {
        const finalizers = current.metadata.finalizers ?? [];
        const labels: Record<string, string> = {
          ...current.metadata.labels,
          ...deps.cloud.launchLabels(offering),
        };
        // A relaunch outside the reservation it first claimed gives that reservation's slot back.
        if (offering.reservationId === undefined) delete labels[WellKnown.capacityReservationIdLabel];
        return {
          finalizers: finalizers.includes(WellKnown.terminationFinalizer)
            ? finalizers
            : [...finalizers, WellKnown.terminationFinalizer],
          labels,
          annotations: {
            ...(nodePool ? hashAnnotations(nodePool, nodeClass) : {}),
            ...current.metadata.annotations,
            [LAUNCH_ATTEMPT_ANNOTATION]: attempt,
            // When this NodeClaim claimed its reservation slot (kept while it claims the same one):
            // concurrent launches yield to earlier claims.
            ...(offering.reservationId !== undefined && !claimsAlready(current, offering.reservationId)
              ? { [RESERVATION_CLAIMED_AT_ANNOTATION]: deps.now().toISOString() }
              : {}),
          },
        };
      },
      { retryConflicts: false },
    );
  } catch (error) {
    if (isConflict(error)) {
      throw new LaunchInProgressError(
        `NodeClaim ${nodeClaim.metadata.name} changed while launching; retrying`,
      );
    }
    throw error;
  }
  return claim.outcome === 'gone' ? undefined : claim.nodeClaim;
}

/** The NodeClaim already claimed a slot of this reservation, at the time its annotation says. */
function claimsAlready(nodeClaim: NodeClaim, reservationId: string): boolean {
  return (
    nodeClaim.metadata.labels?.[WellKnown.capacityReservationIdLabel] === reservationId &&
    nodeClaim.metadata.annotations?.[RESERVATION_CLAIMED_AT_ANNOTATION] !== undefined
  );
}

/** The relaunch count that keys the monitor; absent for a first launch, as in monitors started before. */
function poolOf(nodePool: NodePool | undefined): { nodePool?: string } {
  return nodePool ? { nodePool: nodePool.metadata.name } : {};
}
