// Whom a test reaches the API server as: the components under test as the identities we ship (the global
// setup applied them from infra/k8s), and the test itself as admin, for set-up and assertions only.
import { inject } from 'vitest';
import { provisionSweepLeaseNamespace, type ShippedIdentities } from '../../local/stack/identities.js';
import { kubeClientsFromKubeconfig, type KubeClients } from '../../shared/kube/client.js';
import { karpenterObjects, type KarpenterObjects } from '../../shared/kube/custom-objects.js';

export function shippedIdentities(): ShippedIdentities {
  return {
    functions: { user: inject('functionsUser'), kubeconfigPath: inject('functionsKubeconfigPath') },
    bridge: {
      user: 'system:serviceaccount:nodeclaim-system:event-bridge',
      kubeconfigPath: inject('bridgeKubeconfigPath'),
    },
  };
}

/** The test's own clients (system:masters): creating NodePools, pods, Deployments; reading what happened. */
export interface AdminAccess {
  kube: () => Promise<KubeClients>;
  objects: KarpenterObjects;
}

export function adminAccess(): AdminAccess {
  const clients = kubeClientsFromKubeconfig(inject('kubeconfigPath'));
  const kube = (): Promise<KubeClients> => Promise.resolve(clients);
  return { kube, objects: karpenterObjects(kube) };
}

/**
 * A namespace of the test's own where the functions' user holds the sweep Lease under the shipped Lease
 * Role; returns the namespace and the function that deletes it.
 */
export async function sweepLeaseNamespace(
  name: string,
): Promise<{ namespace: string; remove: () => Promise<void> }> {
  const namespace = name.toLowerCase();
  const remove = await provisionSweepLeaseNamespace(
    inject('kubeconfigPath'),
    namespace,
    inject('functionsUser'),
  );
  return { namespace, remove };
}
