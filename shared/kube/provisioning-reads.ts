// What a provisioning window reads from the API server, behind one narrow interface so the window can be
// unit tested against in-memory state (test/support/fake-lifecycle.ts): the cluster's NodeClaims, Nodes,
// NodePools and AKSNodeClasses listed fresh (never the sweep's watch-fed cache, see lifecycle/provisioning/cluster-state.ts),
// the pods bound to a node and not finished, the pods bound to none, and the DaemonSets.
// kubeProvisioningReads implements it with the API server client, every list read in pages.
import {
  AppsV1Api,
  type V1DaemonSet,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from '@kubernetes/client-node';
import type { KubeClients } from './client.js';
import type { KarpenterObjects } from './custom-objects.js';
import { listAllPages, pageOf } from './paging.js';
import { listingClusterReader, type ClusterState } from './cluster-reader.js';

export interface ProvisioningReads {
  cluster(): Promise<ClusterState>;
  /** Pods bound to a node whose phase is neither Succeeded nor Failed. */
  boundPods(): Promise<V1Pod[]>;
  /** Pods bound to no node (pending, or not yet seen by the scheduler). */
  unboundPods(): Promise<V1Pod[]>;
  daemonSets(): Promise<V1DaemonSet[]>;
  /**
   * Claims and volumes, for the pods that mount a claim: a volume pinned to a zone (Azure Disk) pins its
   * pod there, as Karpenter's VolumeTopology reads it. Read only in windows with such a pod.
   */
  persistentVolumeClaims(): Promise<V1PersistentVolumeClaim[]>;
  persistentVolumes(): Promise<V1PersistentVolume[]>;
}

const asIs = <T>(item: T): T => item;

export function kubeProvisioningReads(sources: {
  kube: () => Promise<KubeClients>;
  objects: KarpenterObjects;
}): ProvisioningReads {
  const { kube } = sources;
  const pods = async (fieldSelector: string): Promise<V1Pod[]> => {
    const { core } = await kube();
    const listed = await listAllPages(
      async (token, limit) =>
        pageOf(
          await core.listPodForAllNamespaces({
            fieldSelector,
            limit,
            ...(token ? { _continue: token } : {}),
          }),
        ),
      asIs<V1Pod>,
    );
    return listed.items;
  };
  return {
    cluster: () => listingClusterReader(sources).read(),
    boundPods: () => pods('spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed'),
    unboundPods: () => pods('spec.nodeName='),
    daemonSets: async () => {
      const apps = (await kube()).config.makeApiClient(AppsV1Api);
      const listed = await listAllPages(
        async (token, limit) =>
          pageOf(await apps.listDaemonSetForAllNamespaces({ limit, ...(token ? { _continue: token } : {}) })),
        asIs<V1DaemonSet>,
      );
      return listed.items;
    },
    persistentVolumeClaims: async () => {
      const { core } = await kube();
      const listed = await listAllPages(
        async (token, limit) =>
          pageOf(
            await core.listPersistentVolumeClaimForAllNamespaces({
              limit,
              ...(token ? { _continue: token } : {}),
            }),
          ),
        asIs<V1PersistentVolumeClaim>,
      );
      return listed.items;
    },
    persistentVolumes: async () => {
      const { core } = await kube();
      const listed = await listAllPages(
        async (token, limit) =>
          pageOf(await core.listPersistentVolume({ limit, ...(token ? { _continue: token } : {}) })),
        asIs<V1PersistentVolume>,
      );
      return listed.items;
    },
  };
}
