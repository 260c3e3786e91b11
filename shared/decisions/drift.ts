// Drift: whether a launched NodeClaim no longer matches what its NodePool and AKSNodeClass would
// launch today. Checked in upstream Karpenter's order (template hash, then requirements, then the node
// class hash, then what the cloud provider says, as core asks CloudProvider.IsDrifted last) so the
// reported reason is the same one upstream would give. The provider's own reasons (the node image, the
// Kubernetes version: cloudprovider/azure/decisions/provider-drift.ts) come in as its answer, so this
// file knows nothing of Azure.
import type { AKSNodeClass } from '../models/aks-node-class.js';
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../models/karpenter.js';
import type { Condition } from '../models/kube.js';
import { isConditionTrue, removeCondition, setCondition, type ConditionUpdate } from './conditions.js';
import {
  NODECLASS_HASH_VERSION,
  NODEPOOL_HASH_VERSION,
  nodeClassHash,
  nodePoolTemplateHash,
} from './hash.js';
import { labelsSatisfy } from './requirements.js';

/** Core's reasons; a provider names its own (upstream's cloudprovider.DriftReason is a string too). */
export type DriftReason = 'NodePoolDrifted' | 'RequirementsDrifted' | 'NodeClassDrifted' | (string & {});

/** The cloud provider's answer to "is this NodeClaim drifted by anything of mine": a reason and why. */
export interface ProviderDrift {
  reason: string;
  message: string;
}

export type DriftResult = { drifted: false } | { drifted: true; reason: DriftReason; message: string };

export type DriftConditionChange =
  { action: 'set'; update: ConditionUpdate } | { action: 'remove'; type: string };

const NOT_DRIFTED: DriftResult = { drifted: false };

interface StampedHash {
  hashKey: string;
  versionKey: string;
  version: string;
  current: string;
}

/**
 * The stamped hash when it can be compared with `current`, else undefined: a NodeClaim without a
 * stamp, or stamped by another hash version, cannot be judged (the sweep restamps it instead).
 */
function comparableStamp(nodeClaim: NodeClaim, stamp: StampedHash): string | undefined {
  const annotations = nodeClaim.metadata.annotations ?? {};
  const stamped = annotations[stamp.hashKey];
  return stamped !== undefined && annotations[stamp.versionKey] === stamp.version ? stamped : undefined;
}

function nodePoolStamp(nodePool: NodePool): StampedHash {
  return {
    hashKey: WellKnown.nodePoolHashAnnotation,
    versionKey: WellKnown.nodePoolHashVersionAnnotation,
    version: NODEPOOL_HASH_VERSION,
    current: nodePoolTemplateHash(nodePool),
  };
}

function nodeClassStamp(nodeClass: AKSNodeClass): StampedHash {
  return {
    hashKey: WellKnown.nodeClassHashAnnotation,
    versionKey: WellKnown.nodeClassHashVersionAnnotation,
    version: NODECLASS_HASH_VERSION,
    current: nodeClassHash(nodeClass),
  };
}

/**
 * Requirements are checked only for keys the NodeClaim carries as labels, as upstream's strict
 * compatibility check does: a requirement on a key the node never had (say, one added to the
 * NodePool later) cannot be judged from its labels and must not drift the fleet.
 */
function requirementsDrift(nodeClaim: NodeClaim, nodePool: NodePool): string | undefined {
  const labels = nodeClaim.metadata.labels ?? {};
  const applicable = nodePool.spec.template.spec.requirements.filter((r) => Object.hasOwn(labels, r.key));
  const check = labelsSatisfy(labels, applicable);
  return check.satisfied ? undefined : check.reason;
}

/**
 * `nodeClass` is the AKSNodeClass the NodePool references now, or undefined when it cannot be read
 * (then only NodePool and requirement drift are judged). `provider` is the cloud provider's answer for
 * the NodeClaim and that class (CloudProvider.isDrifted), judged last.
 */
export function evaluateDrift(
  nodeClaim: NodeClaim,
  nodePool: NodePool,
  nodeClass: AKSNodeClass | undefined,
  provider?: ProviderDrift,
): DriftResult {
  if (!nodeClaim.status?.providerID) return NOT_DRIFTED;

  const pool = nodePoolStamp(nodePool);
  const stampedPool = comparableStamp(nodeClaim, pool);
  if (stampedPool !== undefined && stampedPool !== pool.current) {
    return {
      drifted: true,
      reason: 'NodePoolDrifted',
      message: `NodePool ${nodePool.metadata.name} template changed (hash ${stampedPool} → ${pool.current})`,
    };
  }

  const unsatisfied = requirementsDrift(nodeClaim, nodePool);
  if (unsatisfied !== undefined) {
    return {
      drifted: true,
      reason: 'RequirementsDrifted',
      message: `NodePool ${nodePool.metadata.name} requirements no longer match: ${unsatisfied}`,
    };
  }

  if (nodeClass) {
    const cls = nodeClassStamp(nodeClass);
    const stampedClass = comparableStamp(nodeClaim, cls);
    if (stampedClass !== undefined && stampedClass !== cls.current) {
      return {
        drifted: true,
        reason: 'NodeClassDrifted',
        message: `AKSNodeClass ${nodeClass.metadata.name} changed (hash ${stampedClass} → ${cls.current})`,
      };
    }
    if (provider) return { drifted: true, reason: provider.reason, message: provider.message };
  }
  return NOT_DRIFTED;
}

/** Set Drifted=True with the reason, or remove the condition from a NodeClaim that is not drifted. */
export function driftConditionUpdate(result: DriftResult): DriftConditionChange {
  if (!result.drifted) return { action: 'remove', type: ConditionTypes.drifted };
  return {
    action: 'set',
    update: { type: ConditionTypes.drifted, status: 'True', reason: result.reason, message: result.message },
  };
}

/** The NodeClaim's conditions after the drift decision; the same array when nothing changes. */
export function applyDriftCondition(
  conditions: readonly Condition[] | undefined,
  result: DriftResult,
  now: Date,
): Condition[] {
  const change = driftConditionUpdate(result);
  return change.action === 'set'
    ? setCondition(conditions, change.update, now)
    : removeCondition(conditions, change.type);
}

/**
 * Hash annotations to patch onto a NodeClaim stamped by another hash version (or not stamped), so it
 * can be judged from now on. Nothing for a NodeClaim that is already Drifted: restamping would erase
 * the evidence. Undefined when no patch is needed.
 */
export function hashAnnotationsToRestamp(
  nodeClaim: NodeClaim,
  nodePool: NodePool,
  nodeClass: AKSNodeClass | undefined,
): Record<string, string> | undefined {
  if (isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.drifted)) return undefined;
  const annotations = nodeClaim.metadata.annotations ?? {};
  const patch: Record<string, string> = {};
  const stamps = [nodePoolStamp(nodePool), ...(nodeClass ? [nodeClassStamp(nodeClass)] : [])];
  for (const stamp of stamps) {
    if (annotations[stamp.versionKey] !== stamp.version || annotations[stamp.hashKey] === undefined) {
      patch[stamp.hashKey] = stamp.current;
      patch[stamp.versionKey] = stamp.version;
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
