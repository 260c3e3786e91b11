// What one provisioning window reads from the cluster: the provisionable pods, the NodePools and
// AKSNodeClasses, the Nodes with the pods bound to them, the NodeClaims (in flight or not), and the
// DaemonSets. Nodes are read before pods, as Karpenter snapshots nodes before listing pods: capacity is
// then never more than what really exists, and any under-provisioning heals in the next window.
//
// Every read sees every write made before it, never a plain eventually consistent cache: a window must see
// the NodeClaims the previous window just created, or it would provision their pods a second time. So the
// kinds the sweep reads come from the cluster reader's fresh read (shared/kube/cluster-reader.ts
// readFresh: its caches once caught up with a consistent list's resourceVersion, else lists), the same
// ClusterState, with the pods (podsFresh, the same way) and DaemonSets only provisioning needs beside
// them. The reads go through the provisioningReads port (shared/kube/provisioning-reads.ts); this file
// orders them and groups the pods.
import type {
  V1DaemonSet,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
} from '@kubernetes/client-node';
import { isProvisionable } from '../../decisions/provisionable-pod.js';
import type { ClusterState } from '../../kube/cluster-reader.js';
import type { LifecycleDependencies } from '../dependencies.js';

export interface ProvisioningState extends ClusterState {
  /** Pods bound to a node and not finished, by node name. */
  boundPods: Map<string, V1Pod[]>;
  pendingPods: V1Pod[];
  daemonSets: V1DaemonSet[];
  /**
   * The claims and volumes, read when a pending pod mounts a claim: a pod whose volume is pinned to a
   * zone may only go there. Absent (no pod mounts one), volumes constrain nothing.
   */
  volumes?: { claims: V1PersistentVolumeClaim[]; volumes: V1PersistentVolume[] };
}

/** How long each read took, ms: the window's log line says which one its time went to. */
export interface ProvisioningReadTimings {
  cluster: number;
  pods: number;
  /** The kinds read from a cache caught up rather than listed ('pods' among them when they were). */
  fromCache: string[];
}

export async function readProvisioningState(
  deps: Pick<LifecycleDependencies, 'provisioningReads'>,
  timings?: ProvisioningReadTimings,
): Promise<ProvisioningState> {
  const reads = deps.provisioningReads;
  const started = performance.now();
  // Nodes (with the NodeClaims, NodePools and AKSNodeClasses) before any pod.
  const { sources, ...cluster } = await reads.cluster();
  const clusterRead = performance.now();
  const [{ bound, unbound: pending, fromCache: podsCached }, daemonSets] = await Promise.all([
    reads.pods(),
    reads.daemonSets(),
  ]);
  if (timings) {
    timings.cluster = Math.round(clusterRead - started);
    timings.pods = Math.round(performance.now() - clusterRead);
    timings.fromCache = [
      ...(sources?.nodeClaims === 'cache' ? ['nodeClaims'] : []),
      ...(sources?.nodes === 'cache' ? ['nodes'] : []),
      ...(podsCached ? ['pods'] : []),
    ];
  }
  const boundPods = new Map<string, V1Pod[]>();
  for (const pod of bound) {
    const nodeName = pod.spec?.nodeName ?? '';
    const list = boundPods.get(nodeName);
    if (list) list.push(pod);
    else boundPods.set(nodeName, [pod]);
  }
  const pendingPods = pending.filter((pod) => isProvisionable(provisionabilityOf(pod)));
  // Volumes are read only when a pending pod mounts a claim: most windows have none.
  const mountsClaim = pendingPods.some((pod) => pod.spec?.volumes?.some((v) => v.persistentVolumeClaim));
  const volumes = mountsClaim
    ? await Promise.all([reads.persistentVolumeClaims(), reads.persistentVolumes()])
    : undefined;
  return {
    ...cluster,
    boundPods,
    pendingPods,
    daemonSets,
    ...(volumes && { volumes: { claims: volumes[0], volumes: volumes[1] } }),
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
