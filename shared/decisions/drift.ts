// Drift: whether a launched NodeClaim no longer matches what its NodePool and AKSNodeClass would
// launch today. Checked in upstream Karpenter's order (template hash, then requirements, then the
// provider's checks in the Azure provider's order: the node class hash, the Kubernetes version, the
// node image) so the reported reason is the same one upstream would give. The version checks compare
// with the class's effective status (status.kubernetesVersion, status.images), which a pin holds and a
// rejected rollout moves back, never with what the gallery publishes: launch boots the same images, so a
// node launched today is never drifted by them.
import type { AKSNodeClass } from '../models/aks-node-class.js';
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../models/karpenter.js';
import type { Condition } from '../models/kube.js';
import {
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
  type ConditionUpdate,
} from './conditions.js';
import {
  imageDefinitionOf,
  imageVersionOf,
  parseKubernetesVersion,
  sameImageDefinition,
  sameKubernetesVersion,
} from '../cloudprovider/azure/decisions/node-image-versions.js';
import {
  NODECLASS_HASH_VERSION,
  NODEPOOL_HASH_VERSION,
  nodeClassHash,
  nodePoolTemplateHash,
} from './hash.js';
import { labelsSatisfy } from './requirements.js';

export type DriftReason =
  'NodePoolDrifted' | 'RequirementsDrifted' | 'NodeClassDrifted' | 'K8sVersionDrift' | 'ImageDrift';

/** What K8sVersionDrift reads of a NodeClaim's Node: the version its kubelet reports. */
export interface NodeVersionInfo {
  metadata?: { deletionTimestamp?: string };
  status?: { nodeInfo?: { kubeletVersion?: string } };
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

/** How a message names an image: its version, with its definition when the other image's differs. */
function describeImage(imageId: string, other: string): string {
  const version = imageVersionOf(imageId) ?? imageId;
  const definition = imageDefinitionOf(imageId);
  return definition !== undefined && !sameImageDefinition(imageId, other)
    ? `${definition}/${version}`
    : version;
}

/**
 * ImageDrift, as the Azure provider's: the image the NodeClaim launched with (status.imageID) is none of
 * the class's effective images. Not judged while the class's images are not ready (a pin that cannot be
 * taken keeps them as they were anyway) or before the NodeClaim records its image.
 */
function imageDrift(nodeClaim: NodeClaim, nodeClass: AKSNodeClass): string | undefined {
  const imageID = nodeClaim.status?.imageID;
  const images = Array.isArray(nodeClass.status?.images) ? nodeClass.status.images : [];
  if (!imageID || images.length === 0) return undefined;
  if (findCondition(nodeClass.status?.conditions, 'ImagesReady')?.status === 'False') return undefined;
  const launched = imageID.toLowerCase();
  if (images.some((image) => image.id.toLowerCase() === launched)) return undefined;
  const target = (images.find((image) => sameImageDefinition(image.id, imageID)) ?? images[0])!.id;
  const targetVersion = imageVersionOf(target);
  const pin = nodeClass.spec.versions?.nodeImageVersion;
  const source =
    pin !== undefined && pin === targetVersion
      ? 'pinned by spec.versions.nodeImageVersion'
      : 'AKSNodeClass default';
  return `node image ${describeImage(imageID, target)} → ${describeImage(target, imageID)} (${source})`;
}

/**
 * K8sVersionDrift, as the Azure provider's: the Node's kubelet runs another Kubernetes version than the
 * class's effective one. Judged only with the Node (not deleting, its kubelet version read) and while
 * the class's Kubernetes version is ready.
 */
function kubernetesVersionDrift(
  nodeClass: AKSNodeClass,
  node: NodeVersionInfo | undefined,
): string | undefined {
  const effective = nodeClass.status?.kubernetesVersion;
  const kubelet = node?.status?.nodeInfo?.kubeletVersion;
  if (!effective || !kubelet || node?.metadata?.deletionTimestamp) return undefined;
  if (findCondition(nodeClass.status?.conditions, 'KubernetesVersionReady')?.status === 'False')
    return undefined;
  if (parseKubernetesVersion(kubelet) === undefined || parseKubernetesVersion(effective) === undefined)
    return undefined;
  if (sameKubernetesVersion(kubelet, effective)) return undefined;
  const source =
    nodeClass.spec.versions?.kubernetesVersion === undefined
      ? "the control plane's"
      : 'pinned by spec.versions.kubernetesVersion';
  return `Kubernetes ${kubelet.replace(/^v/, '')} → ${effective} (${source})`;
}

/**
 * `nodeClass` is the AKSNodeClass the NodePool references now, or undefined when it cannot be read
 * (then only NodePool and requirement drift are judged). `node` is the NodeClaim's Node when the
 * caller has it: without it the Kubernetes version is not judged.
 */
export function evaluateDrift(
  nodeClaim: NodeClaim,
  nodePool: NodePool,
  nodeClass: AKSNodeClass | undefined,
  node?: NodeVersionInfo,
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
    const kubernetes = kubernetesVersionDrift(nodeClass, node);
    if (kubernetes !== undefined) return { drifted: true, reason: 'K8sVersionDrift', message: kubernetes };
    const image = imageDrift(nodeClaim, nodeClass);
    if (image !== undefined) return { drifted: true, reason: 'ImageDrift', message: image };
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
