// What one provisioning window reads from the cluster: the provisionable pods, the NodePools and
// AKSNodeClasses, the Nodes with the pods bound to them, the NodeClaims (in flight or not), and the
// DaemonSets. Nodes are read before pods, as Karpenter snapshots nodes before listing pods: capacity is
// then never more than what really exists, and any under-provisioning heals in the next window.
//
// Every list goes to the API server, not to the sweep's watch-fed cache: a window must see the NodeClaims
// the previous window just created, or it would provision their pods a second time, and an eventually
// consistent cache may not have them yet. So the kinds the sweep reads come from the cluster reader's
// fresh mode (cluster/cluster-reader.ts listingClusterReader), the same ClusterState, with the pods and
// DaemonSets only provisioning needs beside them.
import { AppsV1Api, type V1DaemonSet, type V1Pod } from '@kubernetes/client-node';
import { isProvisionable } from '../../decisions/provisionable-pod.js';
import { listAllPages, pageOf } from '../../kube/paging.js';
import { listingClusterReader, type ClusterState } from '../cluster/cluster-reader.js';
import type { LifecycleDependencies } from '../dependencies.js';

export interface ProvisioningState extends ClusterState {
  /** Pods bound to a node and not finished, by node name. */
  boundPods: Map<string, V1Pod[]>;
  pendingPods: V1Pod[];
  daemonSets: V1DaemonSet[];
}

const asIs = <T>(item: T): T => item;

export async function readProvisioningState(
  deps: Pick<LifecycleDependencies, 'kube' | 'objects'>,
): Promise<ProvisioningState> {
  // Nodes (with the NodeClaims, NodePools and AKSNodeClasses) before any pod.
  const cluster = await listingClusterReader(deps).read();
  const clients = await deps.kube();
  const apps = clients.config.makeApiClient(AppsV1Api);
  const pods = async (fieldSelector: string): Promise<V1Pod[]> => {
    const listed = await listAllPages(
      async (token, limit) =>
        pageOf(
          await clients.core.listPodForAllNamespaces({
            fieldSelector,
            limit,
            ...(token ? { _continue: token } : {}),
          }),
        ),
      asIs<V1Pod>,
    );
    return listed.items;
  };
  const [bound, pending, daemonSets] = await Promise.all([
    pods('spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed'),
    pods('spec.nodeName='),
    listAllPages(
      async (token, limit) =>
        pageOf(await apps.listDaemonSetForAllNamespaces({ limit, ...(token ? { _continue: token } : {}) })),
      asIs<V1DaemonSet>,
    ),
  ]);
  const boundPods = new Map<string, V1Pod[]>();
  for (const pod of bound) {
    const nodeName = pod.spec?.nodeName ?? '';
    const list = boundPods.get(nodeName);
    if (list) list.push(pod);
    else boundPods.set(nodeName, [pod]);
  }
  return {
    ...cluster,
    boundPods,
    pendingPods: pending.filter((pod) => isProvisionable(provisionabilityOf(pod))),
    daemonSets: daemonSets.items,
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
