// Keeps an AKSNodeClass's status: the cloud provider answers the status it should have (the images it
// resolves to, the newest published version of each architecture/generation's gallery definition; the
// cluster's Kubernetes version; ImagesReady / KubernetesVersionReady / ValidationSucceeded, every field
// that reaches a node parses / Ready), as Karpenter's provider reconciles its NodeClass; this step writes
// it, only when something changed, guarded by the resourceVersion it read.
import { plainEqual } from '../../decisions/plain-equal.js';
import type { AKSNodeClass } from '../../models/index.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeStatus, type StatusWrite } from './status-write.js';

export async function reconcileNodeClassStatus(
  deps: Pick<LifecycleDependencies, 'objects' | 'cloud' | 'settings'>,
  nodeClass: AKSNodeClass,
): Promise<StatusWrite<AKSNodeClass>> {
  if (nodeClass.metadata.deletionTimestamp) return { object: nodeClass, written: false };
  const { kubernetesVersion } = deps.settings.cluster;
  const desired = await deps.cloud.nodeClassStatus(nodeClass, kubernetesVersion);
  const current = nodeClass.status ?? {};
  if (
    plainEqual(current.images ?? [], desired.images) &&
    current.kubernetesVersion === desired.kubernetesVersion &&
    plainEqual(current.conditions ?? [], desired.conditions)
  ) {
    return { object: nodeClass, written: false };
  }
  return writeStatus(nodeClass, desired, (name, patch) =>
    deps.objects.nodeClasses.mergePatchStatus(name, patch),
  );
}
