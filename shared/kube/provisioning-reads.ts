// What a provisioning window reads from the cluster, behind one narrow interface so the window can be
// unit tested against in-memory state (test/support/fake-lifecycle.ts): the cluster's NodeClaims, Nodes,
// NodePools and AKSNodeClasses, the pods bound to a node and not finished, the pods bound to none, and the
// DaemonSets, every one with every write made before the read in it (see
// lifecycle/provisioning/cluster-state.ts for why).
//
// kubeProvisioningReads reads them through the cluster reader's caches once they have caught up with a
// consistent list's resourceVersion (ClusterReader.readFresh, podsFresh), and lists what they cannot
// answer, every list in pages. At 1,000 nodes and 10,000 pods the lists were the window: 48 MB of bound
// pods alone, parsed in a process shared with everything else, made a window's reads take 7-47 s, and the
// next window waited for them.
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
import {
  listingClusterReader,
  type ClusterReader,
  type ClusterState,
  type FreshSources,
} from './cluster-reader.js';
import { provisioningPodOf } from './pods.js';

export interface ProvisioningReads {
  /** `sources`: where the NodeClaims and Nodes came from (a cache caught up, or a list and why). */
  cluster(): Promise<ClusterState & { sources?: FreshSources }>;
  pods(): Promise<ProvisioningPods>;
  daemonSets(): Promise<V1DaemonSet[]>;
  /**
   * Claims and volumes, for the pods that mount a claim: a volume pinned to a zone (Azure Disk) pins its
   * pod there, as Karpenter's VolumeTopology reads it. Read only in windows with such a pod.
   */
  persistentVolumeClaims(): Promise<V1PersistentVolumeClaim[]>;
  persistentVolumes(): Promise<V1PersistentVolume[]>;
}

export interface ProvisioningPods {
  /** Pods bound to a node whose phase is neither Succeeded nor Failed. */
  bound: V1Pod[];
  /** Pods bound to no node (pending, or not yet seen by the scheduler). */
  unbound: V1Pod[];
  /** Whether they came from the pod cache (as provisioningPodOf gives them) rather than lists. */
  fromCache: boolean;
}

const asIs = <T>(item: T): T => item;
const finished = (phase: string | undefined) => phase === 'Succeeded' || phase === 'Failed';

export function kubeProvisioningReads(
  sources: {
    kube: () => Promise<KubeClients>;
    objects: KarpenterObjects;
  },
  /** The caches to read from; without them every read lists. */
  caches?: Pick<ClusterReader, 'readFresh' | 'podsFresh'>,
): ProvisioningReads {
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
    cluster: () => (caches ? caches.readFresh() : listingClusterReader(sources).read()),
    async pods() {
      const cached = await caches?.podsFresh();
      if (cached) {
        const bound: V1Pod[] = [];
        const unbound: V1Pod[] = [];
        for (const pod of cached) {
          if (!pod.nodeName) unbound.push(provisioningPodOf(pod));
          else if (!finished(pod.phase)) bound.push(provisioningPodOf(pod));
        }
        return { bound, unbound, fromCache: true };
      }
      const [bound, unbound] = await Promise.all([
        pods('spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed'),
        pods('spec.nodeName='),
      ]);
      return { bound, unbound, fromCache: false };
    },
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
