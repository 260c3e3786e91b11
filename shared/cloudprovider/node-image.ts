// Resolves the AKS node image a launch boots: the AKSNodeClass's effective image for the offering's
// architecture and Hyper-V generation, the one in status.images (pinned by spec.versions, or the newest
// no rollout rejected), so launch and drift agree on the image and a pinned class never boots a newer
// one. The definition comes from the image family, the class's effective Kubernetes version and the
// offering. A class whose status has no image for it (not written yet, or written before its spec
// changed) has it resolved as the status step would, from the versions the gallery publishes, so a
// brand-new class still launches. An unresolvable combination is a reason the launch cannot proceed.
import type { Offering } from '../decisions/offerings.js';
import { communityGalleryImageId, imageDefinitionFor, type NodeOsSku } from './azure/decisions/node-image.js';
import {
  chooseEffectiveVersions,
  chooseKubernetesVersion,
  effectiveKubernetesVersion,
  sameImageDefinition,
  type ImageLookup,
} from './azure/decisions/node-image-versions.js';
import type { AKSNodeClass, AKSNodeClassImage } from '../models/index.js';
import type { CloudProviderParts } from './parts.js';

export type NodeImageResolution =
  { imageId: string; osSku: NodeOsSku } | { reason: 'ImageNotResolved'; message: string };

/** The image among `images` that is of the lookup's gallery definition (any version). */
function imageOfDefinition(
  images: readonly AKSNodeClassImage[] | undefined,
  lookup: ImageLookup,
): AKSNodeClassImage | undefined {
  const definitionId = communityGalleryImageId(lookup.gallery, lookup.definition, 'any');
  return (Array.isArray(images) ? images : []).find((image) => sameImageDefinition(image.id, definitionId));
}

export async function resolveNodeImage(
  deps: Pick<CloudProviderParts, 'settings' | 'images'>,
  nodeClass: AKSNodeClass,
  offering: Offering,
): Promise<NodeImageResolution> {
  const family = nodeClass.spec.imageFamily ?? 'Ubuntu';
  const controlPlane = deps.settings.cluster.kubernetesVersion;
  const kubernetesVersion = effectiveKubernetesVersion(nodeClass, controlPlane);
  const choice = imageDefinitionFor({
    imageFamily: family,
    kubernetesVersion,
    arch: offering.arch,
    generations: offering.hyperVGenerations ?? ['V2'],
  });
  if ('problem' in choice) {
    return { reason: 'ImageNotResolved', message: `${choice.problem} (VM size ${offering.vmSize})` };
  }
  const lookup: ImageLookup = {
    gallery: choice.gallery,
    definition: choice.definition,
    arch: offering.arch,
    generation: choice.generation,
  };
  // The status's images carry the requirements that chose them; their definition is the one the same
  // family, version and size choose, unless the spec changed since the status was written.
  const effective = imageOfDefinition(nodeClass.status?.images, lookup);
  if (effective) return { imageId: effective.id, osSku: choice.osSku };

  const versions = await deps.images.list(choice.gallery, choice.definition);
  const decided = chooseEffectiveVersions({
    nodeClass,
    kubernetes:
      nodeClass.status?.kubernetesVersion === undefined
        ? chooseKubernetesVersion(nodeClass, controlPlane)
        : { kubernetesVersion },
    resolved: [{ lookup, imageId: undefined, versions }],
  });
  const resolved = imageOfDefinition(decided.images, lookup);
  if (resolved) return { imageId: resolved.id, osSku: choice.osSku };
  const needs =
    `imageFamily "${family}" for Kubernetes ${kubernetesVersion} (${offering.arch}, Hyper-V ${choice.generation}) ` +
    `needs image ${choice.definition} of community gallery ${choice.gallery}`;
  const why =
    versions.length === 0
      ? `which publishes no version in ${deps.settings.azure.location}`
      : decided.problems.length > 0
        ? `which AKSNodeClass ${nodeClass.metadata.name} has no effective version of: ${decided.problems.map((p) => p.message).join('; ')}`
        : `every published version of which was rolled back (status.rolledBackVersions of AKSNodeClass ${nodeClass.metadata.name})`;
  return { reason: 'ImageNotResolved', message: `${needs}, ${why}` };
}
