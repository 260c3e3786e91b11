// Resolves the AKS node image a launch boots: the definition from the AKSNodeClass image family, the
// cluster's Kubernetes version and the offering's architecture and generation, then the newest version
// the community gallery publishes. An unresolvable combination is a reason the launch cannot proceed.
import type { Offering } from '../decisions/offerings.js';
import {
  communityGalleryImageId,
  imageDefinitionFor,
  newestImageVersion,
  type NodeOsSku,
} from './azure/decisions/node-image.js';
import type { AKSNodeClass } from '../models/index.js';
import type { CloudProviderParts } from './parts.js';

export type NodeImageResolution =
  { imageId: string; osSku: NodeOsSku } | { reason: 'ImageNotResolved'; message: string };

export async function resolveNodeImage(
  deps: Pick<CloudProviderParts, 'settings' | 'images'>,
  nodeClass: AKSNodeClass,
  offering: Offering,
): Promise<NodeImageResolution> {
  const family = nodeClass.spec.imageFamily ?? 'Ubuntu';
  const { kubernetesVersion } = deps.settings.cluster;
  const choice = imageDefinitionFor({
    imageFamily: family,
    kubernetesVersion,
    arch: offering.arch,
    generations: offering.hyperVGenerations ?? ['V2'],
  });
  if ('problem' in choice) {
    return { reason: 'ImageNotResolved', message: `${choice.problem} (VM size ${offering.vmSize})` };
  }
  const version = newestImageVersion(await deps.images.list(choice.gallery, choice.definition));
  if (!version) {
    return {
      reason: 'ImageNotResolved',
      message:
        `imageFamily "${family}" for Kubernetes ${kubernetesVersion} (${offering.arch}, Hyper-V ${choice.generation}) ` +
        `needs image ${choice.definition} of community gallery ${choice.gallery}, which publishes no version in ` +
        `${deps.settings.azure.location}`,
    };
  }
  return {
    imageId: communityGalleryImageId(choice.gallery, choice.definition, version),
    osSku: choice.osSku,
  };
}
