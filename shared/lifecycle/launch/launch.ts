// Launch, the first lifecycle phase: for a NodeClaim without a providerID, choose the cheapest available
// offering (spot where allowed, then zonal), PUT the VM and return as soon as ARM has accepted it. The launch monitor orchestration takes it from there.
// Level-triggered: it reads the NodeClaim and the VM and converges, so duplicate, late and concurrent
// events are harmless. Exactly one PUT per VM succeeds, whatever ARM and the queue do: the PUT is
// create-only (`If-None-Match: *`), so a delivery whose PUT was throttled, failed or hung while another
// delivery created the VM (or whose own earlier answer was lost) gets 412 and adopts the VM that exists;
// it never PUTs again. The resourceVersion-guarded claim only keeps deliveries that read the same
// version from deciding twice; it cannot order a delivery that is still inside the SDK's retries.
import { isRestError } from '@azure/core-rest-pipeline';
import { armErrorInfo } from '../../azure/virtual-machines.js';
import { findCondition } from '../../decisions/conditions.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { hashAnnotations } from '../../decisions/hash.js';
import {
  classifyLaunchError,
  describeLaunchFailure,
  type LaunchFailure,
} from '../../decisions/launch-errors.js';
import { selectOffering, type Offering } from '../../decisions/offerings.js';
import { compareOfferingsByPrice } from '../../decisions/prices/offering-order.js';
import { priceOf } from '../../decisions/prices/price-book.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import { validateRequirements } from '../../decisions/requirements.js';
import { providerIdFor, vmNameFor } from '../../decisions/vm-spec.js';
import { vmOwnership } from '../../decisions/vm-ownership.js';
import { isConflict } from '../../kube/errors.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../models/index.js';
import { ConditionTypes, WellKnown } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import { holdsReservationSeat, recordOfReservation } from '../../decisions/capacity-reservations.js';
import {
  listReservationClaimants,
  offeringsWithReservations,
  reservationClaimants,
} from '../../cloudprovider/reserved-offerings.js';
import { overlaidOfferingPrice, overlaidCapacity } from '../../decisions/node-overlays.js';
import { currentNodeOverlays } from '../../cloudprovider/node-overlays.js';
import { countCreateError } from './create-error-metric.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { recordLaunchFailure } from './launch-outcome.js';
import { ensureLaunchMonitor, launchMonitorInput, startLaunchMonitor } from './launch-monitor-start.js';
import {
  capacityOptions,
  launchLabels,
  offeringOfVm,
  vmBody,
  type NodeLaunchInputs,
} from '../../cloudprovider/vm-body.js';
import { resolveNodeImage } from '../../cloudprovider/node-image.js';
import { ensureBootstrapToken } from '../../kube/bootstrap-tokens.js';
import type { NodeOsSku } from '../../decisions/node-image.js';
import { nodeClaimTarget, updateNodeClaimStatus, writeNodeClaimStatus } from '../nodeclaim-writes.js';
import { LaunchBlockReasons, type LaunchBlockReason } from './block-reasons.js';
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

/** Thrown for throttling and server errors from ARM: the message is retried, no VM is duplicated. */
export class TransientLaunchError extends Error {
  override readonly name = 'TransientLaunchError';
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const LAUNCH_ATTEMPT_ANNOTATION = 'karpenter.azure.com/launch-attempt';

/**
 * An ARM refusal for want of a permission, from any request launch makes (the VM PUT, reading the VM,
 * the SKU catalog, the image gallery): the same request would be refused again, so the NodeClaim waits
 * with the missing action named instead of the message being retried into the poison queue.
 */
function authorizationRefusal(error: unknown): LaunchFailure | undefined {
  if (!isRestError(error)) return undefined;
  const failure = classifyLaunchError(armErrorInfo(error));
  return failure.reason === LaunchBlockReasons.authorizationFailed ? failure : undefined;
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
    azureCode: failure.azureCode,
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
    // A read refused before anything was created (the PUT's own refusal is handled where it is sent).
    const refusal = authorizationRefusal(error);
    if (!refusal) throw error;
    const nodeClaim = await deps.objects.nodeClaims.get(name);
    if (!nodeClaim || nodeClaim.status?.providerID || nodeClaim.metadata.deletionTimestamp) throw error;
    return blockForAuthorization(
      deps,
      nodeClaim,
      nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel],
      refusal,
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

  const vmName = vmNameFor(name);
  const existingVm = await deps.vms.get(vmName);
  // Reserved offerings count every other NodeClaim in their reservation, not this one's own earlier claim.
  const { offerings, records } = await offeringsWithReservations(deps, { except: name });
  let offering: Offering | undefined;
  let image: { imageId: string; osSku: NodeOsSku } | undefined;
  if (existingVm) {
    const ownership = vmOwnership(existingVm, {
      clusterName: deps.settings.clusterName,
      nodeClaimName: name,
    });
    if (!ownership.owned) {
      await blockLaunch(deps, nodeClaim, LaunchBlockReasons.vmNameConflict, ownership.conflict);
      log.warn('launch blocked', { reason: LaunchBlockReasons.vmNameConflict, detail: ownership.conflict });
      return { action: 'blocked', reason: LaunchBlockReasons.vmNameConflict, message: ownership.conflict };
    }
    offering = offeringOfVm(existingVm, offerings);
    if (!offering) throw new Error(`VM ${vmName} exists with a size or zone that is not in the SKU catalog`);
  } else {
    const unavailable = await deps.unavailable.listActive(deps.now());
    // The book provisioning priced this NodeClaim's instance types with, so both agree on the cheapest.
    const prices = deps.pricing.prices();
    const overlays = await currentNodeOverlays(deps);
    const pool = nodePool?.metadata.name ?? '';
    const selection = selectOffering({
      requirements: nodeClaim.spec.requirements,
      ...(nodeClaim.spec.resources?.requests ? { requests: nodeClaim.spec.resources.requests } : {}),
      offerings,
      unavailable: unavailable.map((u) => u.block),
      order: compareOfferingsByPrice((o) => {
        const price = priceOf(prices, o.vmSize, o.capacityType);
        return overlays ? overlaidOfferingPrice(overlays, pool, o, price) : price;
      }),
      ...(overlays && { extendedCapacity: (o: Offering) => overlaidCapacity(overlays, pool, o.vmSize) }),
      ...capacityOptions(deps.settings, nodeClass),
    });
    if (!selection.offering) {
      await failWithoutOffering(deps, nodeClaim, selection.reason, context);
      return { action: 'failed', reason: 'InsufficientCapacity' };
    }
    offering = selection.offering;
    const resolvedImage = await resolveNodeImage(deps, nodeClass, offering);
    if ('reason' in resolvedImage) {
      await blockLaunch(deps, nodeClaim, resolvedImage.reason, resolvedImage.message);
      log.warn('launch blocked', { reason: resolvedImage.reason, detail: resolvedImage.message });
      return { action: 'blocked', ...resolvedImage };
    }
    image = resolvedImage;
  }

  const claimed = await claimLaunch(deps, nodeClaim, offering, nodePool, nodeClass, context.invocationId);
  if (!existingVm && offering.reservationId !== undefined) {
    // Other launches may have read the same free slot: the claimants agree on who takes it, and a
    // launch that does not relaunches from its claim, where the slot now counts as taken.
    const record = recordOfReservation(records, offering.reservationId);
    const claimants = reservationClaimants(await listReservationClaimants(deps), offering.reservationId);
    if (!record || !holdsReservationSeat(record, claimants, name)) {
      if (yieldedReservation)
        throw new LaunchInProgressError(`reservation ${offering.reservationId} is contended; retrying`);
      log.info('reservation slot taken by another launch; choosing again', {
        reservation: offering.reservationId,
      });
      return launchNodeClaim(deps, name, context, adopting, true);
    }
  }
  const providerID = providerIdFor({
    subscriptionId: deps.settings.azure.subscriptionId,
    resourceGroup: deps.settings.azure.resourceGroup,
    vmName,
  });

  let pollerState: string | undefined;
  if (!existingVm && image) {
    // The node's own token, made before the VM that carries it; the same one when this launch is retried.
    const bootstrapToken = await ensureBootstrapToken(
      (await deps.kube()).core,
      { name, uid: claimed.metadata.uid ?? '' },
      { now: deps.now(), registrationTimeoutMinutes: deps.settings.lifecycle.registrationTimeoutMinutes },
    );
    const node: NodeLaunchInputs = { ...image, bootstrapToken };
    let put: Awaited<ReturnType<typeof deps.vms.beginCreate>>;
    try {
      put = await deps.vms.beginCreate(
        vmName,
        vmBody(deps.settings, claimed, offering, nodePool, nodeClass, node),
      );
    } catch (error) {
      const info = armErrorInfo(error);
      const failure = classifyLaunchError(info);
      if (failure.retryable || !isRestError(error)) {
        throw new TransientLaunchError(
          `VM PUT for ${vmName} failed: ${info.message}`,
          failure.retryAfterSeconds,
        );
      }
      if (failure.reason === LaunchBlockReasons.authorizationFailed) {
        // ARM refused before creating anything; another offering would be refused alike. The NodeClaim
        // keeps waiting with the missing permission named, and no offering is marked unavailable.
        return blockForAuthorization(deps, claimed, nodePool?.metadata.name, failure);
      }
      await recordLaunchFailure(
        deps,
        {
          nodeClaim: { name, uid: claimed.metadata.uid ?? '', ...poolOf(nodePool) },
          vmName,
          offering,
          failure,
        },
        context,
      );
      return { action: 'failed', reason: failure.reason };
    }
    if (!put.created) {
      // The VM appeared between our GET and our PUT: adopt it from a fresh read of both, exactly as if it
      // had existed from the start (its offering, not ours, goes on the NodeClaim).
      if (adopting) throw new LaunchInProgressError(`VM ${vmName} is being created by another delivery`);
      log.info('VM created meanwhile by another delivery; adopting it', { vmName });
      return launchNodeClaim(deps, name, context, true, yieldedReservation);
    }
    pollerState = put.pollerState;
  }

  const write = await writeNodeClaimStatus(deps.objects, claimed, (current) => ({
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
  }));
  const launched = write?.nodeClaim;
  if (!launched) {
    // The NodeClaim went away while the PUT was in flight; termination may already have looked for the
    // VM and found nothing, so the VM this launch created is removed here rather than left orphaned.
    await deps.vms.beginDelete(vmName);
    log.warn('NodeClaim deleted during launch; deleting its VM', { vmName });
    return { action: 'skipped', why: 'NodeClaim deleted during launch' };
  }

  await startLaunchMonitor(
    deps,
    launched,
    context,
    launchMonitorInput(deps, launched, nodeClass, {
      vmName,
      offering,
      ...(pollerState ? { pollerState } : {}),
      startedAt: deps.now().toISOString(),
    }),
  );
  // Counted once per NodeClaim: by the delivery that wrote its providerID, not by every one that got here.
  if (write.written && !write.before.status?.providerID) {
    deps.metrics.increment('karpenter_nodeclaims_launch_started_total', {
      nodepool: nodePool?.metadata.name ?? '',
    });
  }
  log.info('VM accepted by Azure; launch monitor started', {
    vmName,
    providerID,
    offering: `${offering.capacityType}/${offering.vmSize}/${offering.zone}`,
    createdVm: !existingVm,
  });
  return { action: 'launched', vmName, providerID, offering, createdVm: !existingVm };
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
  await setLaunchedFalse(deps, nodeClaim, 'InsufficientCapacity', message);
  await deps.events.warning(nodeClaimTarget(nodeClaim), 'InsufficientCapacity', message);
  countCreateError(deps, nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel], 'InsufficientCapacity');
  deps.log.warn('no offering fits; deleting NodeClaim', { nodeClaim: nodeClaim.metadata.name, detail });
  await deleteNodeClaim(deps, nodeClaim, context);
}

async function setLaunchedFalse(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: string,
  message: string,
): Promise<void> {
  await updateNodeClaimStatus(deps.objects, nodeClaim, (current) => ({
    ...current.status,
    conditions: applyLifecycleConditions(
      current.status?.conditions,
      [{ type: ConditionTypes.launched, status: 'False', reason, message }],
      deps.now(),
    ),
  }));
}

/**
 * One resourceVersion-guarded write before the PUT: the termination finalizer (so a NodeClaim deleted
 * while its VM is being created still gets its VM removed), the offering's labels, the template hashes,
 * and a launch-attempt annotation. Of several deliveries that read the same version only one wins this
 * write; the others get LaunchInProgressError and are retried. A delivery that read a later version (the
 * winner's own write, say) may win too while the first one's PUT waits in the SDK's retries: the
 * create-only PUT, not this claim, is what keeps that second winner from creating or updating the VM twice.
 */
async function claimLaunch(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  offering: Offering,
  nodePool: NodePool | undefined,
  nodeClass: AKSNodeClass,
  attempt: string,
): Promise<NodeClaim> {
  const finalizers = nodeClaim.metadata.finalizers ?? [];
  const annotations = {
    ...(nodePool ? hashAnnotations(nodePool, nodeClass) : {}),
    ...nodeClaim.metadata.annotations,
    [LAUNCH_ATTEMPT_ANNOTATION]: attempt,
  };
  try {
    return await deps.objects.nodeClaims.mergePatch(nodeClaim.metadata.name, {
      metadata: {
        resourceVersion: nodeClaim.metadata.resourceVersion,
        finalizers: finalizers.includes(WellKnown.terminationFinalizer)
          ? finalizers
          : [...finalizers, WellKnown.terminationFinalizer],
        // A relaunch outside the reservation it first claimed gives that reservation's slot back.
        labels: {
          ...launchLabels(offering),
          ...(offering.reservationId === undefined ? { [WellKnown.capacityReservationIdLabel]: null } : {}),
        },
        annotations,
      },
    });
  } catch (error) {
    if (isConflict(error)) {
      throw new LaunchInProgressError(
        `NodeClaim ${nodeClaim.metadata.name} changed while launching; retrying`,
      );
    }
    throw error;
  }
}

/** The relaunch count that keys the monitor; absent for a first launch, as in monitors started before. */
function poolOf(nodePool: NodePool | undefined): { nodePool?: string } {
  return nodePool ? { nodePool: nodePool.metadata.name } : {};
}
