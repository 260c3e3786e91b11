// What one provisioning window reads from the cluster: the provisionable pods, the NodePools and
// AKSNodeClasses, the Nodes with the pods bound to them, the NodeClaims (in flight or not), and the
// DaemonSets. Nodes are read before pods, as Karpenter snapshots nodes before listing pods: capacity is
// then never more than what really exists, and any under-provisioning heals in the next window.
//
// Every list goes to the API server, not to the sweep's watch-fed cache (cluster/cluster-reader.ts): a
// window must see the NodeClaims the previous window just created, or it would provision their pods a
// second time, and an eventually consistent cache may not have them yet.
import { AppsV1Api, type V1DaemonSet, type V1Pod } from '@kubernetes/client-node';
import { isProvisionable } from '../../decisions/provisionable-pod.js';
import type { AKSNodeClass } from '../../models/aks-node-class.js';
import type { NodeClaim, NodePool } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { listNodes } from '../../kube/nodes.js';
import type { LifecycleDependencies } from '../dependencies.js';

export interface ClusterState {
  nodes: Node[];
  /** Pods bound to a node and not finished, by node name. */
  boundPods: Map<string, V1Pod[]>;
  pendingPods: V1Pod[];
  nodePools: NodePool[];
  nodeClasses: AKSNodeClass[];
  nodeClaims: NodeClaim[];
  daemonSets: V1DaemonSet[];
}

const PAGE_SIZE = 500;

export async function readClusterState(
  deps: Pick<LifecycleDependencies, 'kube' | 'objects'>,
): Promise<ClusterState> {
  const clients = await deps.kube();
  const [nodes, nodeClaims] = await Promise.all([listNodes(clients.core), deps.objects.nodeClaims.list()]);
  const apps = clients.config.makeApiClient(AppsV1Api);
  const [bound, pending, nodePools, nodeClasses, daemonSets] = await Promise.all([
    listAll((page) =>
      clients.core.listPodForAllNamespaces({
        fieldSelector: 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed',
        ...page,
      }),
    ),
    listAll((page) => clients.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=', ...page })),
    deps.objects.nodePools.list(),
    deps.objects.nodeClasses.list(),
    listAll((page) => apps.listDaemonSetForAllNamespaces(page)),
  ]);
  const boundPods = new Map<string, V1Pod[]>();
  for (const pod of bound) {
    const nodeName = pod.spec?.nodeName ?? '';
    const list = boundPods.get(nodeName);
    if (list) list.push(pod);
    else boundPods.set(nodeName, [pod]);
  }
  return {
    nodes,
    boundPods,
    pendingPods: pending.filter((pod) => isProvisionable(provisionabilityOf(pod))),
    nodePools,
    nodeClasses,
    nodeClaims,
    daemonSets,
  };
}

export function provisionabilityOf(pod: V1Pod): Parameters<typeof isProvisionable>[0] {
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  return {
    nodeName: pod.spec?.nodeName,
    nominatedNodeName: pod.status?.nominatedNodeName,
    scheduled: scheduled ? { status: scheduled.status, reason: scheduled.reason } : undefined,
    ownerKinds: (pod.metadata?.ownerReferences ?? []).filter((o) => o.controller).map((o) => o.kind),
  };
}

/** Every item of a list, read PAGE_SIZE at a time so a large cluster never arrives as one response. */
async function listAll<T>(
  list: (page: { limit: number; _continue?: string }) => Promise<{
    items: T[];
    metadata?: { _continue?: string };
  }>,
): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const page = await list({ limit: PAGE_SIZE, ...(token ? { _continue: token } : {}) });
    items.push(...page.items);
    token = page.metadata?._continue || undefined;
  } while (token);
  return items;
}
