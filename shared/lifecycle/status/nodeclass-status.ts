// Keeps an AKSNodeClass's status as the Azure provider does: the images it resolves to (the newest
// published version of each architecture/generation's gallery definition, resolved by the cloud provider),
// the cluster's Kubernetes version, and ImagesReady / KubernetesVersionReady / ValidationSucceeded (every
// field that reaches a node parses) / Ready. Writes only when something changed, guarded by the
// resourceVersion it read.
import { desiredNodeClassStatus, imageLookups } from '../../decisions/nodeclass-status.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import type { AKSNodeClass } from '../../models/index.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeStatus, type StatusWrite } from './status-write.js';

export async function reconcileNodeClassStatus(
  deps: Pick<LifecycleDependencies, 'objects' | 'cloud' | 'settings' | 'now'>,
  nodeClass: AKSNodeClass,
): Promise<StatusWrite<AKSNodeClass>> {
  if (nodeClass.metadata.deletionTimestamp) return { object: nodeClass, written: false };
  const { kubernetesVersion } = deps.settings.cluster;
  const lookups = imageLookups(nodeClass, kubernetesVersion);
  const resolved = 'problem' in lookups ? lookups : await deps.cloud.resolveImages(lookups);
  const desired = desiredNodeClassStatus({ nodeClass, kubernetesVersion, resolved, now: deps.now() });
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
