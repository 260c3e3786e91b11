// The pod reads and writes termination's drain makes (list a Node's pods, evict one, delete one), behind
// one narrow interface so the drain can be unit tested against in-memory pods (test/support/fake-pods.ts).
// kubeDrainPods implements it with the API server client; refusals arrive as the client's errors (404,
// 429 from a PodDisruptionBudget, …), which the drain sorts by status code.
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClients } from './client.js';

export interface PodRef {
  namespace: string;
  name: string;
}

export interface DrainPods {
  /** Every pod bound to the Node, as one list request. */
  onNode(nodeName: string): Promise<V1Pod[]>;
  /** Asks the Eviction API to evict the pod (which respects its PodDisruptionBudgets). */
  evict(pod: PodRef): Promise<void>;
  /** Deletes the pod outright, past the NodeClaim's terminationGracePeriod. */
  delete(pod: PodRef): Promise<void>;
}

export function kubeDrainPods(kube: () => Promise<KubeClients>): DrainPods {
  return {
    onNode: async (nodeName) =>
      (await (await kube()).core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` }))
        .items,
    evict: async ({ namespace, name }) => {
      await (
        await kube()
      ).core.createNamespacedPodEviction({
        name,
        namespace,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
      });
    },
    delete: async ({ namespace, name }) => {
      await (await kube()).core.deleteNamespacedPod({ name, namespace });
    },
  };
}
