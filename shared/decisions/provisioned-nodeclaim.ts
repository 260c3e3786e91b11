// The NodeClaim a provisioning window writes for one NodeClaim of the scheduling simulation, as
// Karpenter's NodeClaimTemplate.ToNodeClaim writes it: the NodePool's template (labels, annotations with
// the drift hashes, taints, startup taints, expireAfter, terminationGracePeriod, nodeClassRef, owner
// reference) with the simulation's requirements (instance types cheapest first, capacity types, what the
// pods fixed), labels and resource requests. As Karpenter's scheduler, it says on every NodeClaim whether
// a minValues was lowered to create it (karpenter.sh/nodeclaim-min-values-relaxed, "true" only under
// MIN_VALUES_POLICY=BestEffort), so the metric and whoever reads the NodeClaim can tell.
//
// Karpenter names it with generateName `<nodepool>-`. Here the name is derived from the window and the
// pods it is for, so a replayed activity or a second run of the same window creates the same name and
// gets AlreadyExists instead of a second NodeClaim for the same pods; generateName is kept for the record.
import type { AKSNodeClass } from '../models/aks-node-class.js';
import { WellKnown, type NodeClaim, type NodePool } from '../models/karpenter.js';
import { deterministicNodeClaimName, nodeClaimFromTemplate } from './nodeclaim-template.js';
import type { NewNodeClaim } from './scheduling/index.js';

export function provisionedNodeClaimName(
  windowId: string,
  claim: Pick<NewNodeClaim, 'nodePoolName' | 'pods'>,
): string {
  const pods = claim.pods.map((pod) => pod.uid).sort();
  return deterministicNodeClaimName(claim.nodePoolName, `provisioning/${windowId}/${pods.join(',')}`);
}

export function provisionedNodeClaim(input: {
  windowId: string;
  claim: NewNodeClaim;
  nodePool: NodePool;
  nodeClass: AKSNodeClass | undefined;
}): NodeClaim {
  const { claim, nodePool } = input;
  const nodeClaim = nodeClaimFromTemplate({
    nodePool,
    nodeClass: input.nodeClass,
    name: provisionedNodeClaimName(input.windowId, claim),
    annotations: { [WellKnown.minValuesRelaxedAnnotation]: claim.minValuesRelaxed ? 'true' : 'false' },
  });
  return {
    ...nodeClaim,
    metadata: {
      ...nodeClaim.metadata,
      generateName: `${nodePool.metadata.name}-`,
      labels: { ...claim.labels, ...nodeClaim.metadata.labels },
    },
    spec: {
      ...nodeClaim.spec,
      requirements: claim.requirements.map((r) => ({ ...r, ...(r.values ? { values: [...r.values] } : {}) })),
      resources: { requests: { ...claim.requests } },
    },
  };
}
