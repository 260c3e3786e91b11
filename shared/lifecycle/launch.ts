// Launch, the first lifecycle phase: for a NodeClaim without a providerID, choose an offering, PUT the VM
// and return as soon as ARM has accepted it. The launch monitor orchestration takes it from there.
// Level-triggered: it reads the NodeClaim and the VM and converges, so duplicate, late and concurrent
// events are harmless (a resourceVersion-guarded claim makes concurrent deliveries PUT at most once).
import type { VirtualMachine } from '@azure/arm-compute';
import { isRestError } from '@azure/core-rest-pipeline';
import { armErrorInfo } from '../azure/virtual-machines.js';
import {
  encodeCustomData,
  kubeletLabels,
  registrationTaints,
  renderBootstrap,
} from '../decisions/bootstrap.js';
import { findCondition } from '../decisions/conditions.js';
import { isManagedNodeClaim } from '../decisions/ownership.js';
import { hashAnnotations } from '../decisions/hash.js';
import { classifyLaunchError } from '../decisions/launch-errors.js';
import { offeringLabels, offeringsFromSkus, selectOffering, type Offering } from '../decisions/offerings.js';
import { applyLifecycleConditions } from '../decisions/lifecycle-conditions.js';
import { validateRequirements } from '../decisions/requirements.js';
import { buildVirtualMachine, providerIdFor, vmNameFor } from '../decisions/vm-spec.js';
import { isConflict } from '../kube/errors.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import { ConditionTypes, WellKnown } from '../models/karpenter.js';
import type { HandlerContext } from '../runtime/definitions.js';
import type { LifecycleDependencies } from './dependencies.js';
import { recordLaunchFailure } from './launch-outcome.js';
import { LaunchMonitorNames, launchMonitorInstanceId, type LaunchMonitorInput } from './launch-monitor.js';
import { nodeClaimTarget, updateNodeClaimStatus } from './nodeclaim-writes.js';
import { deleteNodeClaim } from './termination.js';

export type LaunchResult =
  | { action: 'skipped'; why: string }
  | { action: 'blocked'; reason: string; message: string }
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

export async function reconcileLaunch(
  deps: LifecycleDependencies,
  name: string,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
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

  const resolved = await resolveClasses(deps, nodeClaim);
  if ('reason' in resolved) {
    await blockLaunch(deps, nodeClaim, resolved.reason, resolved.message);
    log.warn('launch blocked', { reason: resolved.reason, detail: resolved.message });
    return { action: 'blocked', ...resolved };
  }
  const { nodePool, nodeClass } = resolved;

  const vmName = vmNameFor(name);
  const existingVm = await deps.vms.get(vmName);
  const offerings = offeringsFromSkus(await deps.skus.list(), deps.settings.azure.location);
  let offering: Offering | undefined;
  if (existingVm) {
    offering = offeringOfVm(existingVm, offerings);
    if (!offering) throw new Error(`VM ${vmName} exists with a size or zone that is not in the SKU catalog`);
  } else {
    const unavailable = await deps.unavailable.listActive(deps.now());
    const selection = selectOffering({
      requirements: nodeClaim.spec.requirements,
      ...(nodeClaim.spec.resources?.requests ? { requests: nodeClaim.spec.resources.requests } : {}),
      offerings,
      unavailable: new Set(unavailable.map((u) => u.key)),
      ...capacityOptions(nodeClass),
    });
    if (!selection.offering) {
      await failWithoutOffering(deps, nodeClaim, selection.reason, context);
      return { action: 'failed', reason: 'InsufficientCapacity' };
    }
    offering = selection.offering;
  }

  const claimed = await claimLaunch(deps, nodeClaim, offering, nodePool, nodeClass, context.invocationId);
  const providerID = providerIdFor({
    subscriptionId: deps.settings.azure.subscriptionId,
    resourceGroup: deps.settings.azure.resourceGroup,
    vmName,
  });

  let pollerState: string | undefined;
  if (!existingVm) {
    try {
      ({ pollerState } = await deps.vms.beginCreate(
        vmName,
        vmBody(deps, claimed, offering, nodePool, nodeClass),
      ));
    } catch (error) {
      const info = armErrorInfo(error);
      const failure = classifyLaunchError(info);
      if (failure.retryable || !isRestError(error)) {
        throw new TransientLaunchError(
          `VM PUT for ${vmName} failed: ${info.message}`,
          failure.retryAfterSeconds,
        );
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
  }

  const launched = await updateNodeClaimStatus(deps.objects, claimed, (current) => ({
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
  if (!launched) {
    // The NodeClaim went away while the PUT was in flight; termination may already have looked for the
    // VM and found nothing, so the VM this launch created is removed here rather than left orphaned.
    await deps.vms.beginDelete(vmName);
    log.warn('NodeClaim deleted during launch; deleting its VM', { vmName });
    return { action: 'skipped', why: 'NodeClaim deleted during launch' };
  }

  await startLaunchMonitor(deps, launched, context, {
    nodeClaim: { name, uid: launched.metadata.uid ?? '', ...poolOf(nodePool) },
    vmName,
    offering,
    ...capacityOptions(nodeClass),
    ...(pollerState ? { pollerState } : {}),
    startedAt: deps.now().toISOString(),
    pollIntervalSeconds: deps.settings.launch.pollIntervalSeconds,
    maxPollIntervalSeconds: deps.settings.launch.maxPollIntervalSeconds,
    deadlineMinutes: deps.settings.launch.deadlineMinutes,
  });
  deps.metrics.increment('nodeclaims_launch_started', { nodePool: nodePool?.metadata.name ?? '' });
  log.info('VM accepted by Azure; launch monitor started', {
    vmName,
    providerID,
    offering: `${offering.capacityType}/${offering.vmSize}/${offering.zone}`,
    createdVm: !existingVm,
  });
  return { action: 'launched', vmName, providerID, offering, createdVm: !existingVm };
}

type Resolution =
  { nodePool: NodePool | undefined; nodeClass: AKSNodeClass } | { reason: string; message: string };

async function resolveClasses(deps: LifecycleDependencies, nodeClaim: NodeClaim): Promise<Resolution> {
  const ref = nodeClaim.spec.nodeClassRef;
  const nodeClass = await deps.objects.nodeClasses.get(ref.name);
  if (!nodeClass) {
    return {
      reason: 'NodeClassNotFound',
      message: `AKSNodeClass "${ref.name}" (spec.nodeClassRef.name) does not exist`,
    };
  }
  const nodePoolName = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
  let nodePool: NodePool | undefined;
  if (nodePoolName) {
    nodePool = await deps.objects.nodePools.get(nodePoolName);
    if (!nodePool) {
      return {
        reason: 'NodePoolNotFound',
        message: `NodePool "${nodePoolName}" (label ${WellKnown.nodePoolLabel}) does not exist`,
      };
    }
  }
  const problems = validateRequirements(nodeClaim.spec.requirements, 'spec.requirements');
  if (problems.length > 0) return { reason: 'InvalidRequirements', message: problems.join('; ') };
  return { nodePool, nodeClass };
}

/** A NodeClaim that cannot launch yet (its classes are missing or invalid) keeps waiting, visibly. */
async function blockLaunch(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: string,
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
  deps.metrics.increment('nodeclaims_launch_failed', {
    nodePool: nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '',
    reason: 'InsufficientCapacity',
  });
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
 * and a launch-attempt annotation. Of several concurrent deliveries only one wins this write; the others
 * get LaunchInProgressError and are retried after the winner has set the providerID.
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
        labels: launchLabels(offering),
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

function launchLabels(offering: Offering): Record<string, string> {
  const labels = offeringLabels(offering);
  return {
    [WellKnown.instanceTypeLabel]: offering.vmSize,
    [WellKnown.capacityTypeLabel]: offering.capacityType,
    ...(offering.zone ? { [WellKnown.zoneLabel]: offering.zone } : {}),
    ...Object.fromEntries(Object.entries(labels).filter(([key]) => key.startsWith('karpenter.azure.com/'))),
  };
}

function vmBody(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  offering: Offering,
  nodePool: NodePool | undefined,
  nodeClass: AKSNodeClass,
): VirtualMachine {
  const vmName = vmNameFor(nodeClaim.metadata.name);
  const nodeLabels = kubeletLabels({
    ...nodePool?.spec.template.metadata?.labels,
    ...nodeClaim.metadata.labels,
    ...offeringLabels(offering),
    ...(nodePool ? { [WellKnown.nodePoolLabel]: nodePool.metadata.name } : {}),
  });
  const bootstrap = renderBootstrap({
    clusterName: deps.settings.clusterName,
    apiServerUrl: deps.settings.bootstrap.apiServerUrl,
    caCertPem: deps.settings.bootstrap.caCertPem,
    bootstrapToken: deps.settings.bootstrap.token,
    nodeName: vmName,
    registerWithTaints: registrationTaints(nodeClaim),
    nodeLabels,
    ...(nodeClass.spec.kubelet ? { kubeletConfig: nodeClass.spec.kubelet } : {}),
    ...(nodeClass.spec.maxPods !== undefined ? { maxPods: nodeClass.spec.maxPods } : {}),
  });
  return buildVirtualMachine({
    location: deps.settings.azure.location,
    clusterName: deps.settings.clusterName,
    nodePoolName: nodePool?.metadata.name ?? '',
    nodeClaimName: nodeClaim.metadata.name,
    offering,
    ...(nodeClass.spec.imageFamily ? { imageFamily: nodeClass.spec.imageFamily } : {}),
    ...(nodeClass.spec.osDiskSizeGB !== undefined ? { osDiskSizeGB: nodeClass.spec.osDiskSizeGB } : {}),
    subnetId: nodeClass.spec.vnetSubnetID ?? deps.settings.azure.defaultSubnetId,
    customData: encodeCustomData(bootstrap),
    sshPublicKey: deps.settings.azure.sshPublicKey,
    adminUsername: deps.settings.azure.adminUsername,
    ...(nodeClass.spec.tags ? { extraTags: nodeClass.spec.tags } : {}),
  });
}

/** The catalog offering an existing VM was created as (size, zone, priority). */
function offeringOfVm(vm: VirtualMachine, offerings: readonly Offering[]): Offering | undefined {
  const capacityType = vm.priority === 'Spot' ? 'spot' : 'on-demand';
  const zoneNumber = vm.zones?.[0];
  const vmSize = vm.hardwareProfile?.vmSize?.toLowerCase();
  return offerings.find(
    (o) =>
      o.vmSize.toLowerCase() === vmSize && o.capacityType === capacityType && o.zoneNumber === zoneNumber,
  );
}

function capacityOptions(nodeClass: AKSNodeClass): { maxPods?: number; osDiskSizeGB?: number } {
  return {
    ...(nodeClass.spec.maxPods !== undefined ? { maxPods: nodeClass.spec.maxPods } : {}),
    ...(nodeClass.spec.osDiskSizeGB !== undefined ? { osDiskSizeGB: nodeClass.spec.osDiskSizeGB } : {}),
  };
}

function poolOf(nodePool: NodePool | undefined): { nodePool?: string } {
  return nodePool ? { nodePool: nodePool.metadata.name } : {};
}

async function startLaunchMonitor(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
  input: LaunchMonitorInput,
): Promise<void> {
  const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '');
  const existing = await context.orchestrations.getStatus(instanceId);
  if (existing) return;
  try {
    await context.orchestrations.startNew(LaunchMonitorNames.orchestration, { instanceId, input });
  } catch (error) {
    // Another delivery started it between our check and our start: that is the outcome we wanted.
    if (await context.orchestrations.getStatus(instanceId)) return;
    throw error;
  }
}

/**
 * A NodeClaim with a providerID whose launch outcome is still unknown and whose monitor is missing (for
 * example, the process stopped between the status write and startNew) gets a monitor that polls by GET.
 */
async function ensureLaunchMonitor(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<void> {
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  if (launched?.status === 'True' || launched?.status === 'False') return;
  const instanceId = launchMonitorInstanceId(nodeClaim.metadata.uid ?? '');
  if (await context.orchestrations.getStatus(instanceId)) return;
  const vmName = vmNameFor(nodeClaim.metadata.name);
  const vm = await deps.vms.get(vmName);
  const offerings = offeringsFromSkus(await deps.skus.list(), deps.settings.azure.location);
  const offering = vm ? offeringOfVm(vm, offerings) : undefined;
  if (!offering) return;
  const nodePool = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
  await startLaunchMonitor(deps, nodeClaim, context, {
    nodeClaim: {
      name: nodeClaim.metadata.name,
      uid: nodeClaim.metadata.uid ?? '',
      ...(nodePool ? { nodePool } : {}),
    },
    vmName,
    offering,
    startedAt: launched?.lastTransitionTime ?? deps.now().toISOString(),
    pollIntervalSeconds: deps.settings.launch.pollIntervalSeconds,
    maxPollIntervalSeconds: deps.settings.launch.maxPollIntervalSeconds,
    deadlineMinutes: deps.settings.launch.deadlineMinutes,
  });
}
