// Existing Nodes and in-flight NodeClaims as the simulation sees them: labels, taints that repel, and
// what is already used of their allocatable.
import type { Taint } from '../../models/kube.js';
import { addInto, parseResources, podRequests, type Resources } from './resources.js';
import type { ExistingNode, PodReference } from './types.js';

export interface SimulatedNode {
  readonly name: string;
  readonly kind: ExistingNode['kind'];
  readonly source: ExistingNode;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly allocatable: Resources;
  /** Requests of the pods bound to it plus those placed by this solve. */
  readonly used: Resources;
  readonly placed: PodReference[];
}

/**
 * Karpenter ignores the startup taints of an uninitialized managed node (they are about to be removed
 * and pods waiting for the node must not be provisioned twice; KS statenode.go Taints).
 */
function effectiveTaints(node: ExistingNode): Taint[] {
  const taints = node.taints ?? [];
  if (node.initialized !== false || !node.startupTaints?.length) return taints;
  return taints.filter(
    (t) =>
      !node.startupTaints?.some(
        (s) => s.key === t.key && s.effect === t.effect && (s.value ?? '') === (t.value ?? ''),
      ),
  );
}

export function compileExistingNode(node: ExistingNode): SimulatedNode {
  const allocatable = parseResources(node.allocatable, `node ${node.name} allocatable`);
  const used: Resources = new Map();
  for (const pod of node.pods ?? []) {
    const requests =
      pod.requests !== undefined
        ? parseResources(pod.requests, 'requests')
        : pod.spec
          ? podRequests(pod.spec)
          : undefined;
    // A bound pod whose requests cannot be read is counted as one pod: the scheduler has already
    // admitted it, so it must not make the node look empty, and it must not fail the solve.
    if (requests === undefined || 'error' in requests) addInto(used, new Map([['pods', 1]]));
    else
      addInto(
        used,
        requests.resources.has('pods') ? requests.resources : new Map([...requests.resources, ['pods', 1]]),
      );
  }
  return {
    name: node.name,
    kind: node.kind,
    source: node,
    labels: node.labels,
    taints: effectiveTaints(node),
    // A node whose allocatable cannot be read takes no pods.
    allocatable: 'error' in allocatable ? new Map() : allocatable.resources,
    used,
    placed: [],
  };
}
