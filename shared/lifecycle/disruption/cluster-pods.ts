// The pods and PodDisruptionBudgets consolidation decides from, read once per sweep (every step that
// needs them shares the read) and grouped the way the decisions look them up.
import type { ConsolidationNodeInput } from '../../decisions/consolidation/candidates.js';
import { indexPdbs, type PdbLimit } from '../../decisions/consolidation/pdb.js';
import type { ConsolidationPod } from '../../decisions/consolidation/pods.js';
import { isDisrupting } from '../../decisions/disruption-state.js';
import type { NodeClaim } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { withCapacityBufferPods } from '../capacity-buffers/capacity-buffer-room.js';
import type { LifecycleDependencies } from '../dependencies.js';
import type { ClusterWorkloads } from '../../kube/cluster-reader.js';
import type { SweepView } from '../cluster/snapshot.js';

export interface ClusterPods {
  /** Pods bound to each Node, by Node name. */
  byNode: ReadonlyMap<string, ConsolidationPod[]>;
  /** Pending pods, scheduled nowhere yet. */
  pending: readonly ConsolidationPod[];
  /** Nodes a pending pod is nominated to (status.nominatedNodeName). */
  nominatedNodes: ReadonlySet<string>;
  pdbs: ReadonlyMap<string, PdbLimit[]>;
  /** When the pod watch last saw a pod event on each Node, by Node name (ClusterWorkloads). */
  podEventTimes: ReadonlyMap<string, number>;
}

function groupClusterPods({ pods, pdbs, podEventTimes }: ClusterWorkloads): ClusterPods {
  const byNode = new Map<string, ConsolidationPod[]>();
  const pending: ConsolidationPod[] = [];
  const nominatedNodes = new Set<string>();
  for (const pod of pods) {
    if (!pod.nodeName) {
      if (pod.phase !== 'Succeeded' && pod.phase !== 'Failed') pending.push(pod);
      if (pod.nominatedNodeName) nominatedNodes.add(pod.nominatedNodeName);
      continue;
    }
    const list = byNode.get(pod.nodeName);
    if (list) list.push(pod);
    else byNode.set(pod.nodeName, [pod]);
  }
  return { byNode, pending, nominatedNodes, pdbs: indexPdbs(pdbs), podEventTimes };
}

export async function readClusterPods(deps: LifecycleDependencies): Promise<ClusterPods> {
  // CapacityBuffers' virtual pods sit on the nodes that hold their room: those are not empty, and the
  // virtual pods must fit elsewhere before their node goes (../capacity-buffers/capacity-buffer-room.ts).
  return withCapacityBufferPods(deps, groupClusterPods(await deps.cluster.workloads()));
}

const perSweep = new WeakMap<SweepView, Promise<ClusterPods>>();

/** The sweep's one read of pods and PDBs, made by the first step that asks. */
export function sweepClusterPods(deps: LifecycleDependencies, view: SweepView): Promise<ClusterPods> {
  let read = perSweep.get(view);
  if (!read) {
    read = readClusterPods(deps);
    perSweep.set(view, read);
    // A failed read is not remembered: the next step that asks tries again.
    read.catch(() => perSweep.delete(view));
  }
  return read;
}

/** The decisions' view of each NodeClaim: its Node, that Node's pods, whether it is disrupting. */
export function nodeInputsOf(
  nodeClaims: readonly NodeClaim[],
  nodesFor: (nodeClaim: NodeClaim) => readonly Node[],
  pods: ClusterPods,
): ConsolidationNodeInput[] {
  return nodeClaims.map((nodeClaim) => {
    const nodes = nodesFor(nodeClaim);
    const node = nodes[0];
    return {
      nodeClaim,
      ...(node ? { node } : {}),
      pods: node ? (pods.byNode.get(node.metadata.name) ?? []) : [],
      disrupting: isDisrupting(nodeClaim, nodes),
    };
  });
}
