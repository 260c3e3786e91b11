// Keeps an AKSNodeClass's status: the cloud provider answers the status it should have (its effective
// images and Kubernetes version, pinned by spec.versions or the newest published version no rollout
// rejected for the control plane's version; the control plane's version; the newest published image
// version; the effective pairs recently used; ImagesReady / KubernetesVersionReady / ValidationSucceeded,
// every field that reaches a node parses and spec.versions asks for versions the class may take / Ready),
// as Karpenter's provider reconciles its NodeClass; this step writes it, only when something changed,
// guarded by the resourceVersion it read. status.rolledBackVersions belongs to the rollout that rejects
// versions: it is written here only to bound it, from the entries read, so a rejection the rollout wrote
// since makes this write conflict instead of being dropped.
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
    current.controlPlaneKubernetesVersion === desired.controlPlaneKubernetesVersion &&
    (desired.latestImageVersion === undefined || current.latestImageVersion === desired.latestImageVersion) &&
    plainEqual(current.recentlyUsedVersions ?? [], desired.recentlyUsedVersions) &&
    desired.rolledBackVersions === undefined &&
    plainEqual(current.conditions ?? [], desired.conditions)
  ) {
    return { object: nodeClass, written: false };
  }
  return writeStatus(nodeClass, desired, (name, patch) =>
    deps.objects.nodeClasses.mergePatchStatus(name, patch),
  );
}
