// A cluster of N nodes in P NodePools, as plain objects shaped the way AKS and this app write them, for
// what telemetry costs: the series budget test counts the series the app would export for it, and the
// telemetry bench drives the real metrics and log code over it. Sized by arguments, not by a live stack,
// so 1,000 nodes cost milliseconds.
import type { ClusterGaugeInput } from '../../shared/decisions/cluster-gauges.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';
import { nodeClaimMetadata, nodeClaimStatus, nodeLabels, nodeStatus } from './realistic-objects.js';

const REGION = 'westus2';
export const ZONES = [`${REGION}-1`, `${REGION}-2`, `${REGION}-3`] as const;
const AT = '2026-01-01T00:00:00Z';

export interface SyntheticCluster extends ClusterGaugeInput {
  nodePools: NodePool[];
  nodeClaims: NodeClaim[];
  nodes: Node[];
}

function nodePool(name: string): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, uid: `uid-${name}` },
    spec: {
      template: {
        metadata: {},
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: `${name}-class` },
          requirements: [],
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '30s' },
      limits: { cpu: '4000', memory: '16000Gi' },
    },
    status: {
      resources: { cpu: '0', memory: '0', pods: '0', 'ephemeral-storage': '0', nodes: '0' },
    },
  } as NodePool;
}

/** `nodes` Nodes, each with its NodeClaim, spread round-robin over `nodePools` NodePools and 3 zones. */
export function syntheticCluster(nodes: number, nodePools: number): SyntheticCluster {
  const pools = Array.from({ length: nodePools }, (_, i) => nodePool(`pool-${i}`));
  const claims: NodeClaim[] = [];
  const kubeNodes: Node[] = [];
  for (let i = 0; i < nodes; i++) {
    const pool = pools[i % nodePools]?.metadata.name ?? 'pool-0';
    const zone = ZONES[i % ZONES.length] ?? ZONES[0];
    const vm = `aks-${pool}-${String(i).padStart(5, '0')}`;
    const providerID = `azure:///subscriptions/s/resourceGroups/mc/providers/Microsoft.Compute/virtualMachines/${vm}`;
    const capacityType = i % 4 === 0 ? 'spot' : 'on-demand';
    const extra = { 'karpenter.sh/nodepool': pool, 'karpenter.sh/capacity-type': capacityType };
    claims.push({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name: vm,
        uid: `uid-${vm}`,
        creationTimestamp: AT,
        ...nodeClaimMetadata(pool, zone, extra),
      },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: `${pool}-class` },
        requirements: [],
      },
      status: nodeClaimStatus(providerID, vm, AT),
    } as NodeClaim);
    kubeNodes.push({
      metadata: { name: vm, labels: nodeLabels(vm, zone, extra) },
      spec: { providerID },
      status: nodeStatus(vm, AT),
    } as Node);
  }
  for (const pool of pools) {
    const count = claims.filter((c) => c.metadata.labels?.['karpenter.sh/nodepool'] === pool.metadata.name);
    pool.status = {
      ...pool.status,
      resources: {
        cpu: String(count.length * 4),
        memory: `${count.length * 16}Gi`,
        pods: String(count.length * 250),
        'ephemeral-storage': `${count.length * 128}G`,
        nodes: String(count.length),
      },
    };
  }
  return { nodePools: pools, nodeClaims: claims, nodes: kubeNodes, isManaged: () => true };
}
