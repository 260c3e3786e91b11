// Where the buffers' virtual pods sit now: placed on the Ready Nodes after their real pods (the room each
// node keeps for headroom). Consolidation reads pods through `withCapacityBufferPods`, so a node that holds
// buffer room is not empty and its virtual pods must fit elsewhere, or on the replacement, before it can
// go, as upstream's consolidation simulates its virtual pods (designs/capacity-buffers.md, "Disruption
// Integration"). The virtual pods join consolidation's view only: nothing drains or evicts them, and the
// drain of a node lists the API's pods, so a buffer never evicts a real pod nor holds up a deletion.
//
// In consolidation's view a virtual pod carries no labels: a PodDisruptionBudget selects by labels and
// must never count a pod that does not exist, and only provisioning needs the labels (for topology).
import type { HeldCapacity, VirtualPods } from '../../decisions/capacity-buffers.js';
import { heldCapacity } from '../../decisions/capacity-buffers.js';
import { boundPodsOf, type ConsolidationPod } from '../../decisions/consolidation/pods.js';
import { isNodeNotReady } from '../../decisions/disruption-state.js';
import type { ExistingNode, SchedulingPod, SchedulingPolicies } from '../../decisions/scheduling/types.js';
import type { Node } from '../../models/kube.js';
import { bufferVirtualPods, readCapacityBuffers } from './capacity-buffers.js';
import type { LifecycleDependencies } from '../dependencies.js';

/** The Nodes virtual pods may sit on (Ready, not deleting, schedulable) with their active pods. */
function existingNodesFor(
  nodes: readonly Node[],
  podsByNode: ReadonlyMap<string, readonly ConsolidationPod[]>,
): ExistingNode[] {
  return nodes
    .filter((n) => !n.metadata.deletionTimestamp && !n.spec.unschedulable && !isNodeNotReady(n))
    .map((node) => ({
      name: node.metadata.name,
      kind: 'Node',
      labels: node.metadata.labels ?? {},
      ...(node.spec.taints ? { taints: node.spec.taints } : {}),
      allocatable: node.status?.allocatable ?? {},
      pods: boundPodsOf(podsByNode.get(node.metadata.name) ?? []),
      initialized: true,
    }));
}

/** Where the virtual pods fit on the Nodes now, after the pods bound there. */
export function bufferRoom(
  virtual: VirtualPods,
  nodes: readonly Node[],
  podsByNode: ReadonlyMap<string, readonly ConsolidationPod[]>,
  policies: SchedulingPolicies,
): HeldCapacity {
  return heldCapacity(virtual.pods, existingNodesFor(nodes, podsByNode), policies);
}

function consolidationPodOf(pod: SchedulingPod, nodeName: string): ConsolidationPod {
  return {
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    uid: pod.metadata.uid,
    labels: {},
    annotations: {},
    ownerKinds: [],
    tolerations: [],
    phase: 'Running',
    ready: true,
    nodeName,
    spec: pod.spec,
    virtual: true,
  };
}

/**
 * Consolidation's pods with each buffer's virtual pods added to the Node that holds them; as given when
 * the gate is off or no buffer is ready.
 */
export async function withCapacityBufferPods<T extends { byNode: ReadonlyMap<string, ConsolidationPod[]> }>(
  deps: LifecycleDependencies,
  pods: T,
): Promise<T> {
  const entries = await readCapacityBuffers(deps);
  if (!entries) return pods;
  const virtual = bufferVirtualPods(entries);
  if (virtual.pods.length === 0) return pods;
  const { nodes } = await deps.cluster.read();
  const held = bufferRoom(virtual, nodes, pods.byNode, deps.settings.scheduling);
  if (held.byNode.size === 0) return pods;
  const byNode = new Map(pods.byNode);
  for (const [nodeName, list] of held.byNode) {
    byNode.set(nodeName, [
      ...(byNode.get(nodeName) ?? []),
      ...list.map((pod) => consolidationPodOf(pod, nodeName)),
    ]);
  }
  return { ...pods, byNode };
}
