// The pod reads and writes termination's drain makes (list a Node's pods, evict one, delete one), behind
// one narrow interface so the drain can be unit tested against in-memory pods (test/support/fake-pods.ts).
// kubeDrainPods implements it with the API server client, obtained once per Node when its pods are
// listed, so a failure to obtain it fails the drain pass rather than counting as one pod's refusal;
// refusals arrive as the client's errors (404, 429 from a PodDisruptionBudget, …), which the drain sorts
// by status code.
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClients } from './client.js';

export interface PodRef {
  namespace: string;
  name: string;
}

/** A Node's pods as one list request returned them, and the writes a drain makes to them. */
export interface NodePods {
  pods: V1Pod[];
  /** Asks the Eviction API to evict the pod (which respects its PodDisruptionBudgets). */
  evict(pod: PodRef): Promise<void>;
  /** Deletes the pod outright, past the NodeClaim's terminationGracePeriod. */
  delete(pod: PodRef): Promise<void>;
}

export interface DrainPods {
  onNode(nodeName: string): Promise<NodePods>;
}

export function kubeDrainPods(kube: () => Promise<KubeClients>): DrainPods {
  return {
    async onNode(nodeName) {
      const { core } = await kube();
      const listed = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
      return {
        pods: listed.items,
        async evict({ namespace, name }) {
          await core.createNamespacedPodEviction({
            name,
            namespace,
            body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
          });
        },
        async delete({ namespace, name }) {
          await core.deleteNamespacedPod({ name, namespace });
        },
      };
    },
  };
}
