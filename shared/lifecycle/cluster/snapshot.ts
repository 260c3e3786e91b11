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
 *
 * `fresh` (with a selector) reads the selected NodeClaims and Nodes with every write made before the call
 * in them (ClusterReader.readSelectedFresh), and lists the NodePools and AKSNodeClasses: a pass run
 * because a NodeClaim of the NodePool is gone must see it gone: the watch-fed cache, read as it is, may
 * still hold the NodeClaim when its deletion's event arrives, and the pass would count it in the budget,
 * start nothing, and leave the freed slot to the next sweep.
 */
export async function readClusterSnapshot(
  deps: Pick<LifecycleDependencies, 'now' | 'cluster' | 'objects'>,
  options: { nodeClaimSelector?: string; fresh?: boolean } = {},
): Promise<ClusterSnapshot> {
  const readAt = deps.now();
  const { nodeClaimSelector, fresh } = options;
  if (fresh && nodeClaimSelector) {
    const [{ nodeClaims, nodes }, nodePools, nodeClasses] = await Promise.all([
      deps.cluster.readSelectedFresh(nodeClaimSelector),
      deps.objects.nodePools.list(),
      deps.objects.nodeClasses.list(),
    ]);
    return { readAt, nodeClaims, nodes, nodePools, nodeClasses };
  }
  return { readAt, ...(await deps.cluster.read(nodeClaimSelector ? { nodeClaimSelector } : {})) };
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
