// The Nodes of a NodeClaim, found by providerID (a GET by status.nodeName, then by the VM's name, which
// is its Node's name): what termination, drain and replacement act on.
import type { NodeClaim } from '../models/karpenter.js';
import type { Node } from '../models/kube.js';
import type { LifecycleDependencies } from './dependencies.js';

/** The Nodes of a NodeClaim; none before it has a providerID. */
export async function nodesOfNodeClaim(
  deps: Pick<LifecycleDependencies, 'nodes'>,
  nodeClaim: NodeClaim,
): Promise<Node[]> {
  const providerID = nodeClaim.status?.providerID;
  if (!providerID) return [];
  return deps.nodes.withProviderID(providerID, nodeClaim.status?.nodeName);
}
