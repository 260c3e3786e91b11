// What a failed rollout can undo on Azure: a node image version. When every drifted node of a NodePool
// drifted because its image is not the class's effective one (ImageDrift), and that effective version is
// new to the pool, the rollout rejects it (status.rolledBackVersions): the class's effective image falls
// back to the newest version not rejected, and the nodes that run the rejected one drift back. Anything
// else a rollout carries (a NodePool or AKSNodeClass spec change, a Kubernetes version) is the user's
// to revert, so the answer is then "nothing to roll back". Pure; the lifecycle asks through the seam
// (CloudProvider.rollbackOf, nodeClaimsOnRolledBack).
import type { AKSNodeClass } from '../../../models/aks-node-class.js';
import { ConditionTypes, type NodeClaim } from '../../../models/karpenter.js';
import { findCondition, isConditionTrue } from '../../../decisions/conditions.js';
import { imageVersionOf } from './node-image-versions.js';
import { AzureDriftReasons } from './provider-drift.js';

/** The image version of a NodeClaim's or a class's image ID, if it names one. */
const versionOf = (imageId: string | undefined): string | undefined =>
  imageId === undefined ? undefined : imageVersionOf(imageId);

const isDrifted = (nodeClaim: NodeClaim): boolean =>
  isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.drifted);

/**
 * The image version a failed rollout of the pool can reject: every drifted NodeClaim is ImageDrift, and
 * the class's effective image version differs from every version the old nodes run; else undefined.
 */
export function imageRollbackOf(
  nodeClaims: readonly NodeClaim[],
  nodeClass: AKSNodeClass | undefined,
): { imageVersion: string } | undefined {
  const drifted = nodeClaims.filter(isDrifted);
  if (drifted.length === 0) return undefined;
  const imageDrift = (c: NodeClaim) =>
    findCondition(c.status?.conditions, ConditionTypes.drifted)?.reason === AzureDriftReasons.image;
  if (!drifted.every(imageDrift)) return undefined;
  const version = versionOf(nodeClass?.status?.images?.[0]?.id);
  if (!version) return undefined;
  const old = new Set(drifted.map((c) => versionOf(c.status?.imageID)));
  return old.has(version) ? undefined : { imageVersion: version };
}

/** NodeClaims of the pool whose image is `imageVersion`. */
export function nodeClaimsRunning(nodeClaims: readonly NodeClaim[], imageVersion: string): number {
  return nodeClaims.filter((c) => versionOf(c.status?.imageID) === imageVersion).length;
}
