// The executor's writes on single NodeClaims: the DisruptionReason mark, and a command's replacement
// NodeClaims (created from the NodePool's current template, launched at once, checked, deleted when a
// failed command no longer needs them).
//
// A replacement is launched by the workflow's activity rather than left to the bridge's event for the
// new NodeClaim: the workflow then does not depend on the bridge being up, and its timing (what the drift
// fan-out exists for) does not include a queue hop. The bridge's later event finds the NodeClaim launched
// and does nothing (launch is level-triggered and guarded).
import { findCondition, setCondition } from '../../decisions/conditions.js';
import { DisruptionAnnotations } from '../../decisions/disruption-state.js';
import { deterministicNodeClaimName, nodeClaimFromTemplate } from '../../decisions/nodeclaim-template.js';
import { isAlreadyExists } from '../../kube/errors.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../models/karpenter.js';
import { allows, valueSetOf } from '../../decisions/scheduling/value-set.js';
import type { NodeSelectorRequirement } from '../../models/kube.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { isTransientCloudError } from '../../cloudprovider/types.js';
import { LaunchInProgressError, reconcileLaunch, type LaunchResult } from '../launch/launch.js';
import { nodeClaimAfter, writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';

export type ReplacementCheck =
  | { status: 'Initialized' }
  | { status: 'Pending' }
  /** Not launched yet (another launch was in flight, or ARM throttled ours): launch it again. */
  | { status: 'NotLaunched' }
  | { status: 'Failed'; why: string };

/** One replacement NodeClaim of a command. */
export interface ReplacementSpec {
  name: string;
  nodePool: string;
  /** The (first) NodeClaim it replaces, recorded in karpenter.azure.com/replacement-of. */
  replacementOf: string;
  /** The instance ID of the command that waits for it (karpenter.azure.com/disruption-command), if one does. */
  command?: string;
  reason: string;
  requirements?: NodeSelectorRequirement[];
  /** Keep this zone: the template's requirements plus it, when they allow it (ReplacementTemplate). */
  zone?: string;
}

/**
 * The name of replacement `index` of try `attempt` of the command whose first candidate has `firstUid`:
 * a retry after a failure gets a fresh one. The first replacement keeps the name drift replacements had
 * before commands could have several, so a replacement made by an earlier version is adopted, not made
 * again.
 */
export function replacementNameFor(nodePool: string, firstUid: string, attempt: number, index = 0): string {
  const suffix = index === 0 ? '' : `/${index}`;
  return deterministicNodeClaimName(nodePool, `replacement/${firstUid}/${attempt}${suffix}`);
}

/** Karpenter's metric label for a disruption reason is the lower-case condition reason ("drifted"). */
export function metricReason(reason: string): string {
  return reason.toLowerCase();
}

/** Sets DisruptionReason=True; the budget counts the NodeClaim as disrupting from this write on. */
export async function markForDisruption(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  reason: string,
  detail: string,
): Promise<NodeClaim | undefined> {
  const write = await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    status: {
      ...current.status,
      conditions: setCondition(
        current.status?.conditions,
        { type: ConditionTypes.disruptionReason, status: 'True', reason, message: detail },
        deps.now(),
      ),
    },
  }));
  return nodeClaimAfter(write);
}

/** Creates the replacement NodeClaim (if it does not exist) from the NodePool's current template and launches it. */
export async function launchReplacement(
  deps: LifecycleDependencies,
  spec: ReplacementSpec,
  context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
): Promise<ReplacementCheck> {
  const nodePool = await deps.objects.nodePools.get(spec.nodePool);
  if (!nodePool) return { status: 'Failed', why: `NodePool ${spec.nodePool} no longer exists` };
  const nodeClass = await deps.objects.nodeClasses.get(nodePool.spec.template.spec.nodeClassRef.name);
  let replacement = await deps.objects.nodeClaims.get(spec.name);
  if (!replacement) {
    try {
      const fromTemplate = nodeClaimFromTemplate({
        nodePool,
        nodeClass,
        name: spec.name,
        annotations: {
          [DisruptionAnnotations.replacementOf]: spec.replacementOf,
          ...(spec.command ? { [DisruptionAnnotations.command]: spec.command } : {}),
        },
      });
      const requirements = spec.requirements ?? withZoneKept(fromTemplate.spec.requirements, spec.zone);
      replacement = await deps.objects.nodeClaims.create(
        requirements === fromTemplate.spec.requirements
          ? fromTemplate
          : { ...fromTemplate, spec: { ...fromTemplate.spec, requirements } },
      );
      deps.metrics.increment('karpenter_nodeclaims_created_total', {
        nodepool: spec.nodePool,
        reason: metricReason(spec.reason),
        // The solve never relaxes minValues (no BestEffort policy here), as upstream reports it then.
        min_values_relaxed: 'false',
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      replacement = await deps.objects.nodeClaims.get(spec.name);
    }
  }
  if (!replacement) return { status: 'Failed', why: `replacement ${spec.name} was deleted` };
  if (replacement.metadata.deletionTimestamp) {
    return { status: 'Failed', why: `replacement ${spec.name} is being deleted` };
  }
  let result: LaunchResult;
  try {
    result = await reconcileLaunch(deps, spec.name, context);
  } catch (error) {
    // The bridge's event may be launching the same NodeClaim right now, or ARM throttled the PUT: both
    // resolve themselves, and the next check launches again if the NodeClaim still has no providerID.
    if (error instanceof LaunchInProgressError || isTransientCloudError(error)) {
      deps.log.info('replacement launch deferred', { replacement: spec.name, why: error.message });
      return { status: 'Pending' };
    }
    throw error;
  }
  if (result.action === 'failed') {
    return { status: 'Failed', why: `replacement ${spec.name} failed to launch: ${result.reason}` };
  }
  return { status: 'Pending' };
}

/**
 * The template's requirements plus `zone`, when they allow it; as they are when there is no zone to keep
 * or they exclude it (the NodePool moved away from that zone: the replacement goes where it now may).
 */
export function withZoneKept(
  requirements: NodeSelectorRequirement[],
  zone: string | undefined,
): NodeSelectorRequirement[] {
  if (zone === undefined) return requirements;
  // An unreadable requirement (valueSetOf undefined) is the launch's to report, not a reason to drop the zone.
  const allowed = requirements
    .filter((r) => r.key === WellKnown.zoneLabel)
    .every((r) => {
      const set = valueSetOf(r);
      return set === undefined || allows(set, zone);
    });
  return allowed
    ? [...requirements, { key: WellKnown.zoneLabel, operator: 'In', values: [zone] }]
    : requirements;
}

export async function checkReplacement(deps: LifecycleDependencies, name: string): Promise<ReplacementCheck> {
  const replacement = await deps.objects.nodeClaims.get(name);
  if (!replacement || replacement.metadata.deletionTimestamp) {
    return { status: 'Failed', why: `replacement ${name} was deleted` };
  }
  const conditions = replacement.status?.conditions;
  const launched = findCondition(conditions, ConditionTypes.launched);
  if (!replacement.status?.providerID && launched === undefined) return { status: 'NotLaunched' };
  if (launched?.status === 'False' && replacement.status?.providerID) {
    return { status: 'Failed', why: `replacement ${name} failed to launch: ${launched.reason}` };
  }
  if (findCondition(conditions, ConditionTypes.initialized)?.status === 'True') {
    return { status: 'Initialized' };
  }
  return { status: 'Pending' };
}

/** Deletes a failed replacement NodeClaim, unless it initialized after all: then it is a working node. */
export async function deleteUninitializedReplacement(
  deps: LifecycleDependencies,
  replacementName: string,
): Promise<void> {
  const replacement = await deps.objects.nodeClaims.get(replacementName);
  if (
    replacement &&
    !replacement.metadata.deletionTimestamp &&
    findCondition(replacement.status?.conditions, ConditionTypes.initialized)?.status !== 'True'
  ) {
    await deps.objects.nodeClaims.delete(replacementName, { uid: replacement.metadata.uid });
  }
}
