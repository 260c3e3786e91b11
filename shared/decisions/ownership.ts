// What this system manages: NodeClaims whose nodeClassRef is an AKSNodeClass, and NodePools whose
// template's nodeClassRef is one. Every other NodeClaim or NodePool belongs to another provider's
// controller and is never touched.
import { AKS_GROUP } from '../models/aks-node-class.js';
import type { NodeClaim, NodeClassReference, NodePool } from '../models/karpenter.js';

/** Takes a missing reference too: the event bridge judges objects as the watch hands them over. */
export function isAksNodeClassRef(ref: NodeClassReference | undefined): boolean {
  return ref?.group === AKS_GROUP && ref.kind === 'AKSNodeClass';
}

export function isManagedNodeClaim(nodeClaim: Pick<NodeClaim, 'spec'>): boolean {
  return isAksNodeClassRef(nodeClaim.spec.nodeClassRef);
}

export function isManagedNodePool(nodePool: Pick<NodePool, 'spec'>): boolean {
  return isAksNodeClassRef(nodePool.spec.template.spec.nodeClassRef);
}
