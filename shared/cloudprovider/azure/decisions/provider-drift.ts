// The Azure provider's own drift (its CloudProvider.IsDrifted, pkg/cloudprovider/drift.go): a node whose
// kubelet runs another Kubernetes version than the class's effective one (K8sVersionDrift), or whose
// image is none of the class's effective images (ImageDrift), in that order, as the Azure provider checks
// them. Both compare with the class's effective status (status.kubernetesVersion, status.images), which a
// pin holds and a rolled-back version moves back, never with what the gallery publishes: launch boots the
// same images, so a node launched today is never drifted by them. Core judges its own reasons first
// (shared/decisions/drift.ts) and takes this answer through the seam. Pure.
import type { AKSNodeClass } from '../../../models/aks-node-class.js';
import type { NodeClaim } from '../../../models/karpenter.js';
import { findCondition } from '../../../decisions/conditions.js';
import type { ProviderDrift } from '../../../decisions/drift.js';
import {
  imageDefinitionOf,
  imageVersionOf,
  parseKubernetesVersion,
  sameImageDefinition,
  sameKubernetesVersion,
} from './node-image-versions.js';

export const AzureDriftReasons = {
  kubernetesVersion: 'K8sVersionDrift',
  image: 'ImageDrift',
} as const;

/** What K8sVersionDrift reads of a NodeClaim's Node: the version its kubelet reports. */
export interface NodeVersionInfo {
  metadata?: { deletionTimestamp?: string };
  status?: { nodeInfo?: { kubeletVersion?: string } };
}

/** How a message names an image: its version, with its definition when the other image's differs. */
function describeImage(imageId: string, other: string): string {
  const version = imageVersionOf(imageId) ?? imageId;
  const definition = imageDefinitionOf(imageId);
  return definition !== undefined && !sameImageDefinition(imageId, other)
    ? `${definition}/${version}`
    : version;
}

/**
 * ImageDrift, as the Azure provider's: the image the NodeClaim launched with (status.imageID) is none of
 * the class's effective images. Not judged while the class's images are not ready (a pin that cannot be
 * taken keeps them as they were anyway) or before the NodeClaim records its image.
 */
function imageDrift(nodeClaim: NodeClaim, nodeClass: AKSNodeClass): string | undefined {
  const imageID = nodeClaim.status?.imageID;
  const images = Array.isArray(nodeClass.status?.images) ? nodeClass.status.images : [];
  if (!imageID || images.length === 0) return undefined;
  if (findCondition(nodeClass.status?.conditions, 'ImagesReady')?.status === 'False') return undefined;
  const launched = imageID.toLowerCase();
  if (images.some((image) => image.id.toLowerCase() === launched)) return undefined;
  const target = (images.find((image) => sameImageDefinition(image.id, imageID)) ?? images[0])!.id;
  const targetVersion = imageVersionOf(target);
  const pin = nodeClass.spec.versions?.nodeImageVersion;
  const source =
    pin !== undefined && pin === targetVersion
      ? 'pinned by spec.versions.nodeImageVersion'
      : 'AKSNodeClass default';
  return `node image ${describeImage(imageID, target)} → ${describeImage(target, imageID)} (${source})`;
}

/**
 * K8sVersionDrift, as the Azure provider's: the Node's kubelet runs another Kubernetes version than the
 * class's effective one. Judged only with the Node (not deleting, its kubelet version read) and while
 * the class's Kubernetes version is ready.
 */
function kubernetesVersionDrift(
  nodeClass: AKSNodeClass,
  node: NodeVersionInfo | undefined,
): string | undefined {
  const effective = nodeClass.status?.kubernetesVersion;
  const kubelet = node?.status?.nodeInfo?.kubeletVersion;
  if (!effective || !kubelet || node?.metadata?.deletionTimestamp) return undefined;
  if (findCondition(nodeClass.status?.conditions, 'KubernetesVersionReady')?.status === 'False')
    return undefined;
  if (parseKubernetesVersion(kubelet) === undefined || parseKubernetesVersion(effective) === undefined)
    return undefined;
  if (sameKubernetesVersion(kubelet, effective)) return undefined;
  const source =
    nodeClass.spec.versions?.kubernetesVersion === undefined
      ? "the control plane's"
      : 'pinned by spec.versions.kubernetesVersion';
  return `Kubernetes ${kubelet.replace(/^v/, '')} → ${effective} (${source})`;
}

/**
 * The provider's drift of a launched NodeClaim against its class, or undefined. `node` is the
 * NodeClaim's Node when the caller has it: without it the Kubernetes version is not judged.
 */
export function providerDrift(
  nodeClaim: NodeClaim,
  nodeClass: AKSNodeClass,
  node?: NodeVersionInfo,
): ProviderDrift | undefined {
  const kubernetes = kubernetesVersionDrift(nodeClass, node);
  if (kubernetes !== undefined) return { reason: AzureDriftReasons.kubernetesVersion, message: kubernetes };
  const image = imageDrift(nodeClaim, nodeClass);
  if (image !== undefined) return { reason: AzureDriftReasons.image, message: image };
  return undefined;
}
