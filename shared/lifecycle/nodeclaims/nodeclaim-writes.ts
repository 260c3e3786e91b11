// Guarded NodeClaim writes. Every write carries the resourceVersion it was computed from, so a handler
// working from stale state gets a conflict and recomputes from a fresh read instead of overwriting newer
// data. Status updates are functions of the current NodeClaim, which makes the retry loop trivial: on a
// conflict the NodeClaim is re-read and the update applied again. (../status/status-write.ts is the other kind: a
// NodePool's or AKSNodeClass's status is computed from the whole sweep view, so a conflict leaves it to
// the next sweep instead.)
import type { NodeClaim, NodeClaimStatus } from '../../models/index.js';
import { statusChanged } from '../../decisions/nodeclaim-status.js';
import type { KarpenterObjects } from '../../kube/custom-objects.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';

export interface NodeClaimStatusWrite {
  /** The NodeClaim as stored after this call. */
  nodeClaim: NodeClaim;
  /** The version the last computed status came from: what this call changed, if it wrote. */
  before: NodeClaim;
  /** Whether this call wrote (false when the status was already as wanted). */
  written: boolean;
}

/**
 * Applies `update` to the NodeClaim's status and writes it when it changed. Returns undefined when the
 * NodeClaim is gone (or replaced by another with the same name).
 */
export async function writeNodeClaimStatus(
  objects: KarpenterObjects,
  current: NodeClaim,
  update: (nodeClaim: NodeClaim) => NodeClaimStatus,
): Promise<NodeClaimStatusWrite | undefined> {
  return retryOnConflict(
    current,
    async (nodeClaim): Promise<NodeClaimStatusWrite | undefined> => {
      if (nodeClaim.metadata.uid !== current.metadata.uid) return undefined;
      const status = update(nodeClaim);
      if (!statusChanged(nodeClaim.status, status)) return { nodeClaim, before: nodeClaim, written: false };
      const stored = await objects.nodeClaims.mergePatchStatus(nodeClaim.metadata.name, {
        metadata: { resourceVersion: nodeClaim.metadata.resourceVersion },
        status,
      });
      return { nodeClaim: stored, before: nodeClaim, written: true };
    },
    () => objects.nodeClaims.get(current.metadata.name),
  );
}

/** writeNodeClaimStatus for callers that need only the stored NodeClaim. */
export async function updateNodeClaimStatus(
  objects: KarpenterObjects,
  current: NodeClaim,
  update: (nodeClaim: NodeClaim) => NodeClaimStatus,
): Promise<NodeClaim | undefined> {
  return (await writeNodeClaimStatus(objects, current, update))?.nodeClaim;
}

/** The NodeClaim as a `kubectl describe`-able event target. */
export function nodeClaimTarget(nodeClaim: NodeClaim): {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
} {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    name: nodeClaim.metadata.name,
    ...(nodeClaim.metadata.uid ? { uid: nodeClaim.metadata.uid } : {}),
  };
}
