// Which NodeClaims this system manages: those whose nodeClassRef is an AKSNodeClass. Every other
// NodeClaim belongs to another provider's controller and is never touched.
import { AKS_GROUP } from '../models/aks-node-class.js';
import type { NodeClaim } from '../models/karpenter.js';

export function isManagedNodeClaim(nodeClaim: Pick<NodeClaim, 'spec'>): boolean {
  const ref = nodeClaim.spec.nodeClassRef;
  return ref.group === AKS_GROUP && ref.kind === 'AKSNodeClass';
}
