// What one sweep knows about the cluster: every NodeClaim, Node, NodePool and AKSNodeClass, as the
// dependencies' cluster reader provides them (see ../../kube/cluster-reader.ts: a watch-fed cache in the
// Function App, full paginated lists where read-your-writes matters), plus the indexes the steps look
// things up by. Building the indexes is linear, so every per-object decision afterwards is a map lookup, never a scan.
import type { NodeClaim } from '../../models/index.js';
import type { Node } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type { ClusterState } from '../../kube/cluster-reader.js';

export interface ClusterSnapshot extends ClusterState {
  readAt: Date;
}

/**
 * `nodeClaimSelector` narrows the NodeClaims to a label selector: the default sweep takes them all, an
 * operator can shard sweeps by NodePool, and tests that share one cluster sweep only their own objects.
 */
export async function readClusterSnapshot(
  deps: LifecycleDependencies,
  options: { nodeClaimSelector?: string } = {},
): Promise<ClusterSnapshot> {
  const readAt = deps.now();
  return { readAt, ...(await deps.cluster.read(options)) };
}

/** The provider ID as a map key: ARM IDs are case-insensitive (see decisions/registration.ts). */
export const providerIdKey = (providerID: string): string => providerID.toLowerCase();

/**
 * The sweep's working view: the snapshot's objects, replaced by the versions the steps wrote, so a later
 * step (initialization after registration) works from what is stored now rather than from the read.
 */
export class SweepView {
  private readonly nodeClaimsByUid = new Map<string, NodeClaim>();
  private readonly nodesByProviderId = new Map<string, Node[]>();

  constructor(readonly snapshot: ClusterSnapshot) {
    for (const nodeClaim of snapshot.nodeClaims) {
      this.nodeClaimsByUid.set(nodeClaim.metadata.uid ?? nodeClaim.metadata.name, nodeClaim);
    }
    for (const node of snapshot.nodes) {
      if (!node.spec.providerID) continue;
      const key = providerIdKey(node.spec.providerID);
      const list = this.nodesByProviderId.get(key);
      if (list) list.push(node);
      else this.nodesByProviderId.set(key, [node]);
    }
  }

  /** NodeClaims in their latest known version. */
  nodeClaims(): NodeClaim[] {
    return [...this.nodeClaimsByUid.values()];
  }

  /** The Nodes whose providerID matches the NodeClaim's; usually zero or one. */
  nodesFor(nodeClaim: NodeClaim): Node[] {
    const providerID = nodeClaim.status?.providerID;
    return providerID ? (this.nodesByProviderId.get(providerIdKey(providerID)) ?? []) : [];
  }

  updateNodeClaim(nodeClaim: NodeClaim): void {
    this.nodeClaimsByUid.set(nodeClaim.metadata.uid ?? nodeClaim.metadata.name, nodeClaim);
  }

  removeNodeClaim(nodeClaim: NodeClaim): void {
    this.nodeClaimsByUid.delete(nodeClaim.metadata.uid ?? nodeClaim.metadata.name);
  }

  updateNode(node: Node): void {
    if (!node.spec.providerID) return;
    const key = providerIdKey(node.spec.providerID);
    const others = (this.nodesByProviderId.get(key) ?? []).filter(
      (n) => n.metadata.name !== node.metadata.name,
    );
    this.nodesByProviderId.set(key, [...others, node]);
  }
}
