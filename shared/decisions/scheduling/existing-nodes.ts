// Existing Nodes and in-flight NodeClaims as the simulation sees them: labels, taints that repel, host
// ports in use, and what is already used of their allocatable (bound pods plus DaemonSets still to come).
import type { Taint } from '../../models/kube.js';
import { missingDaemons, type CompiledDaemonSet } from './daemonsets.js';
import { hostPortsOf, type HostPort } from './pods.js';
import { labelRequirements, type RequirementMap } from './requirement-map.js';
import { addInto, parseResources, podRequests, type Resources } from './resources.js';
import { HOSTNAME_KEY, type TopologyNode } from './topology.js';
import type { ExistingNode, PodReference } from './types.js';
import { exactly } from './value-set.js';

export interface SimulatedNode extends TopologyNode {
  readonly kind: ExistingNode['kind'];
  readonly source: ExistingNode;
  readonly allocatable: Resources;
  /** Requests of the pods bound to it, DaemonSets that will still run there, and pods placed by this solve. */
  readonly used: Resources;
  readonly hostPorts: HostPort[];
  readonly placed: PodReference[];
}

/**
 * Karpenter ignores the startup taints of an uninitialized managed node (they are about to be removed,
 * and pods waiting for the node must not be provisioned twice; KS statenode.go Taints).
 */
function effectiveTaints(node: ExistingNode): Taint[] {
  const taints = node.taints ?? [];
  if (node.initialized !== false || !node.startupTaints?.length) return taints;
  const sameTaint = (a: Taint, b: Taint) =>
    a.key === b.key && a.effect === b.effect && (a.value ?? '') === (b.value ?? '');
  return taints.filter((t) => !node.startupTaints?.some((s) => sameTaint(s, t)));
}

const ONE_POD: Resources = new Map([['pods', 1]]);

export function compileExistingNode(
  node: ExistingNode,
  daemonSets: readonly CompiledDaemonSet[],
): SimulatedNode {
  const allocatable = parseResources(node.allocatable, `node ${node.name} allocatable`);
  const used: Resources = new Map();
  const hostPorts: HostPort[] = [];
  const present = new Set<string>();
  for (const pod of node.pods ?? []) {
    if (pod.daemonSet) present.add(pod.daemonSet);
    if (pod.spec) hostPorts.push(...hostPortsOf(pod.spec));
    const requests =
      pod.requests !== undefined
        ? parseResources(pod.requests, 'requests')
        : pod.spec
          ? podRequests(pod.spec)
          : undefined;
    // A bound pod whose requests cannot be read is counted as one pod: the scheduler already admitted
    // it, so it must not make the node look empty, and it must not fail the solve.
    if (requests === undefined || 'error' in requests) addInto(used, ONE_POD);
    else
      addInto(
        used,
        requests.resources.has('pods') ? requests.resources : new Map([...requests.resources, ...ONE_POD]),
      );
  }
  const taints = effectiveTaints(node);
  for (const daemon of missingDaemons(daemonSets, {
    labels: node.labels,
    taints,
    daemonSetsPresent: present,
  })) {
    addInto(used, daemon.requests);
    hostPorts.push(...daemon.hostPorts);
  }
  const requirements: RequirementMap = new Map([
    ...labelRequirements(node.labels),
    [HOSTNAME_KEY, exactly(node.labels[HOSTNAME_KEY] ?? node.name)],
  ]);
  return {
    name: node.name,
    kind: node.kind,
    isNode: node.kind === 'Node',
    source: node,
    labels: node.labels,
    requirements,
    taints,
    pods: (node.pods ?? []).map((pod) => ({ namespace: pod.namespace, labels: pod.labels ?? {} })),
    // A node whose allocatable cannot be read takes no pods.
    allocatable: 'error' in allocatable ? new Map() : allocatable.resources,
    used,
    hostPorts,
    placed: [],
  };
}
