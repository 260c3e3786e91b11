// The repair workflow's activities (repair-workflow.ts): each reads what it needs, does one thing, and is
// idempotent, so the orchestration can call it again after an outage or a host restart.
import type { PreemptedOffering, RebootProgress, RebootStart } from '../../../cloudprovider/types.js';
import { removeCondition } from '../../../decisions/conditions.js';
import { disruptionReasonOf } from '../../../decisions/disruption-state.js';
import type { RebootRecord } from '../../../decisions/node-repair/escalation.js';
import { conditionMetricLabel, isUnhealthy } from '../../../decisions/node-repair/policies.js';
import { WellKnown, type NodeClaim } from '../../../models/karpenter.js';
import type { HandlerContext } from '../../../runtime/definitions.js';
import type { LifecycleDependencies } from '../../dependencies.js';
import { publishTerminating } from '../blocked-events.js';
import { markForDisruption } from '../replacements.js';
import { nodesOfNodeClaim } from '../../nodeclaims/nodeclaim-nodes.js';
import { writeNodeClaim } from '../../nodeclaims/nodeclaim-writes.js';
import { taintNodeDisrupted, untaintNodeDisrupted } from '../../nodeclaims/node-taints.js';
import { deleteNodeClaim } from '../../termination/termination.js';
import { publishRepairEvent, RepairEventReasons } from './repair-events.js';
import type { HealthCheck, RepairBegin, RepairInput, ReplaceOldInput } from './repair-workflow.js';

/** On the NodeClaim: the reboots repair tried and when the last one finished, for a later repair. */
export const RepairAnnotations = {
  reboots: 'karpenter.azure.com/repair-reboots',
  lastRebootAt: 'karpenter.azure.com/repair-last-reboot-at',
} as const;

/** The reboot record a NodeClaim carries (annotations written by recordReboot). */
export function rebootRecordOf(nodeClaim: NodeClaim): RebootRecord {
  const annotations = nodeClaim.metadata.annotations ?? {};
  const tried = Number(annotations[RepairAnnotations.reboots] ?? '0');
  const last = annotations[RepairAnnotations.lastRebootAt];
  return {
    rebootsTried: Number.isInteger(tried) && tried > 0 ? tried : 0,
    ...(last ? { lastRebootAt: last } : {}),
  };
}

async function currentNodeClaim(
  deps: LifecycleDependencies,
  input: RepairInput,
): Promise<NodeClaim | undefined> {
  const nodeClaim = await deps.objects.nodeClaims.get(input.nodeClaim.name);
  return nodeClaim && nodeClaim.metadata.uid === input.nodeClaim.uid ? nodeClaim : undefined;
}

/** Marks the NodeClaim (DisruptionReason=True, Unhealthy; the budget counts it) and taints its Node. */
export async function beginRepair(deps: LifecycleDependencies, input: RepairInput): Promise<RepairBegin> {
  const nodeClaim = await currentNodeClaim(deps, input);
  if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) return 'gone';
  const marked =
    disruptionReasonOf(nodeClaim) === 'Unhealthy'
      ? nodeClaim
      : await markForDisruption(deps, nodeClaim, 'Unhealthy', input.detail);
  if (!marked) return 'gone';
  const nodes = await nodesOfNodeClaim(deps, marked);
  for (const node of nodes) await taintNodeDisrupted(deps, node);
  const next =
    input.firstStep === 'preempted'
      ? 'spot eviction notice: replacement launched at once, node drained within the notice'
      : `rebooting the VM (reboot ${input.previous.rebootsTried + 1} of at most ${input.escalation.maxReboots}) before any replacement`;
  await publishRepairEvent(deps, marked, nodes, RepairEventReasons.started, `${input.detail}; ${next}`);
  deps.log.info('node repair started', {
    nodeClaim: input.nodeClaim.name,
    step: input.firstStep,
    detail: input.detail,
  });
  return 'ok';
}

/** POST restart; 'gone' for a VM that no longer exists, `failed` for an answer that is not transient. */
export function rebootVm(
  deps: Pick<LifecycleDependencies, 'cloud'>,
  input: RepairInput,
): Promise<RebootStart> {
  return deps.cloud.reboot(input.vmName);
}

export function pollReboot(
  deps: Pick<LifecycleDependencies, 'cloud'>,
  pollerState: string,
): Promise<RebootProgress> {
  return deps.cloud.pollReboot(pollerState);
}

/** Writes the reboot onto the NodeClaim (so a later repair counts it) and says so on Node and NodeClaim. */
export async function recordReboot(
  deps: LifecycleDependencies,
  recorded: { repair: RepairInput; record: RebootRecord },
): Promise<void> {
  const { repair, record } = recorded;
  const nodeClaim = await currentNodeClaim(deps, repair);
  if (!nodeClaim) return;
  await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    annotations: {
      ...current.metadata.annotations,
      [RepairAnnotations.reboots]: String(record.rebootsTried),
      ...(record.lastRebootAt ? { [RepairAnnotations.lastRebootAt]: record.lastRebootAt } : {}),
    },
  }));
  await publishRepairEvent(
    deps,
    nodeClaim,
    await nodesOfNodeClaim(deps, nodeClaim),
    RepairEventReasons.rebooted,
    `VM ${repair.vmName} restarted (reboot ${record.rebootsTried}); waiting up to ${repair.escalation.recoveryMs / 1000} s for ${repair.condition.type}=${repair.condition.status} to clear`,
  );
}

/** Healthy when no repair policy matches the Node any more. */
export async function checkHealth(deps: LifecycleDependencies, input: RepairInput): Promise<HealthCheck> {
  const nodeClaim = await currentNodeClaim(deps, input);
  if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) return 'gone';
  const nodes = await nodesOfNodeClaim(deps, nodeClaim);
  if (nodes.length === 0) return 'unhealthy';
  return nodes.some((node) => isUnhealthy(node, deps.settings.repair.policies)) ? 'unhealthy' : 'healthy';
}

/** The reboot cleared the condition: the Node back in service, the mark removed. */
export async function finishRecovered(
  deps: LifecycleDependencies,
  recovered: { repair: RepairInput; record: RebootRecord },
): Promise<void> {
  const { repair, record } = recovered;
  const nodeClaim = await currentNodeClaim(deps, repair);
  if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) return;
  const nodes = await nodesOfNodeClaim(deps, nodeClaim);
  for (const node of nodes) await untaintNodeDisrupted(deps, node);
  if (disruptionReasonOf(nodeClaim) === 'Unhealthy') {
    await writeNodeClaim(deps.objects, nodeClaim, (latest) => ({
      status: {
        ...latest.status,
        conditions: removeCondition(latest.status?.conditions, 'DisruptionReason'),
      },
    }));
  }
  await publishRepairEvent(
    deps,
    nodeClaim,
    nodes,
    RepairEventReasons.recovered,
    `${repair.condition.type}=${repair.condition.status} cleared after reboot ${record.rebootsTried}; node back in service (${repair.detail})`,
  );
  deps.log.info('node repaired by reboot', {
    nodeClaim: repair.nodeClaim.name,
    reboots: record.rebootsTried,
  });
}

/**
 * The preempted spot offering is marked unavailable, so the replacement and later launches avoid it. The
 * VM names it while it exists; once Azure has evicted it (the workflow came late: a slow host, a restart
 * past the notice) the NodeClaim's own labels still say which size, zone and capacity type it was.
 */
export async function learnPreemption(deps: LifecycleDependencies, input: RepairInput): Promise<void> {
  const preempted = await preemptedOffering(deps, input);
  if (!preempted) return;
  const remembered = await deps.cloud.rememberPreemption(
    { vmSize: preempted.vmSize, zone: preempted.zone },
    input.vmName,
  );
  deps.log.info('spot offering marked unavailable after a preemption', {
    vmName: input.vmName,
    offering: `spot/${preempted.vmSize}/${preempted.zone}`,
    from: preempted.from,
    seconds: remembered.ttlSeconds,
  });
}

async function preemptedOffering(
  deps: LifecycleDependencies,
  input: RepairInput,
): Promise<(PreemptedOffering & { from: 'vm' | 'nodeclaim labels' }) | undefined> {
  const vm = await deps.cloud.get(input.vmName);
  if (vm) {
    const offering = await deps.cloud.offeringOf(vm);
    return offering?.capacityType === 'spot' ? { ...offering, from: 'vm' } : undefined;
  }
  const labels = (await currentNodeClaim(deps, input))?.metadata.labels ?? {};
  const vmSize = labels[WellKnown.instanceTypeLabel];
  const zone = labels[WellKnown.zoneLabel];
  if (labels[WellKnown.capacityTypeLabel] !== 'spot' || !vmSize || !zone) return undefined;
  return { vmSize, zone, from: 'nodeclaim labels' };
}

/** Deletes the unhealthy NodeClaim (termination drains it), with the events and metrics of a repair. */
export async function deleteRepaired(
  deps: LifecycleDependencies,
  replace: ReplaceOldInput,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<void> {
  const { repair } = replace;
  const nodeClaim = await currentNodeClaim(deps, repair);
  if (!nodeClaim || nodeClaim.metadata.deletionTimestamp) return;
  const nodes = await nodesOfNodeClaim(deps, nodeClaim);
  const replacement = replace.replacementReady
    ? `replacement ${repair.replacement.name} is Initialized`
    : `replacement ${repair.replacement.name} is not Initialized yet`;
  await publishRepairEvent(
    deps,
    nodeClaim,
    nodes,
    RepairEventReasons.replacing,
    `${repair.detail}; ${replace.why}; ${replacement}; deleting the node`,
  );
  await publishTerminating(deps, nodeClaim, nodes, 'Unhealthy');
  await deleteNodeClaim(deps, nodeClaim, context);
  const capacityType = nodeClaim.metadata.labels?.[WellKnown.capacityTypeLabel] ?? '';
  deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
    reason: 'unhealthy',
    nodepool: repair.nodeClaim.nodePool,
    capacity_type: capacityType,
    consolidation_policy: '',
    termination_mode: 'graceful',
  });
  deps.metrics.increment('karpenter_nodeclaims_unhealthy_disrupted_total', {
    condition: conditionMetricLabel(repair.condition.type),
    nodepool: repair.nodeClaim.nodePool,
    capacity_type: capacityType,
    image_id: nodeClaim.status?.imageID ?? '',
  });
  deps.log.info('unhealthy node deleted', {
    nodeClaim: repair.nodeClaim.name,
    replacement: repair.replacement.name,
    replacementReady: replace.replacementReady,
    why: replace.why,
  });
}
