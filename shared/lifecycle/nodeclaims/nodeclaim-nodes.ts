// The Nodes of a NodeClaim, found by providerID (a GET by status.nodeName, then by the VM's name, which
// is its Node's name): what termination, drain and replacement act on. And the other way round, the
// NodeClaim of a Node, which the Node events (registration, a spot eviction notice) start from.
import type { NodeClaim } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';

/** The Nodes of a NodeClaim; none before it has a providerID. */
export async function nodesOfNodeClaim(
  deps: Pick<LifecycleDependencies, 'nodes'>,
  nodeClaim: NodeClaim,
): Promise<Node[]> {
  const providerID = nodeClaim.status?.providerID;
  if (!providerID) return [];
  return deps.nodes.withProviderID(providerID, nodeClaim.status?.nodeName);
}

/**
 * The NodeClaim a Node's providerID belongs to. The common case costs one GET: the VM name gives the
 * NodeClaim's name back, confirmed by recomputing it. Otherwise (a sanitized or hashed VM name, or a VM
 * this system did not name) the NodeClaims are listed, since no selector reaches status.providerID.
 */
export async function nodeClaimForProviderId(
  deps: LifecycleDependencies,
  providerID: string,
): Promise<NodeClaim | undefined> {
  const matches = (n: NodeClaim): boolean =>
    n.status?.providerID !== undefined && n.status.providerID.toLowerCase() === providerID.toLowerCase();
  const candidate = deps.cloud.nodeClaimNameOfProviderId(providerID);
  if (candidate !== undefined) {
    const nodeClaim = await deps.objects.nodeClaims.get(candidate);
    if (nodeClaim && matches(nodeClaim)) return nodeClaim;
  }
  return (await deps.objects.nodeClaims.list()).find(matches);
}
