// The AKSNodeClass status the Azure provider keeps (pkg/controllers/nodeclass/status): the images the
// class resolves to, one per architecture and Hyper-V generation with the requirements a VM size must
// meet to boot it (status.images, preferred first), the cluster's Kubernetes version, and the conditions
// ImagesReady, KubernetesVersionReady and Ready (True when both are). The provider also checks subnets
// (SubnetsReady) against its own VNet; this app validates a subnet when a launch uses it instead, so
// Ready here depends on the two conditions it can decide. Pure: the image lookups are inputs.
import type { AKSNodeClass, AKSNodeClassImage } from '../models/index.js';
import type { Condition } from '../models/kube.js';
import { setCondition, type ConditionUpdate } from './conditions.js';
import { minorVersion } from './kubernetes-version.js';
import { imageDefinitionFor } from './node-image.js';
import { rootReadiness } from './nodepool-status.js';
import type { Architecture, HyperVGeneration } from './offerings.js';

export const NodeClassConditions = {
  imagesReady: 'ImagesReady',
  kubernetesVersionReady: 'KubernetesVersionReady',
  ready: 'Ready',
} as const;

const ARCH_LABEL = 'kubernetes.io/arch';
const HYPERV_GENERATION_LABEL = 'karpenter.azure.com/sku-hyperv-generation';

/** The combinations the provider lists, in its order of preference. */
export const IMAGE_COMBINATIONS: ReadonlyArray<{ arch: Architecture; generation: HyperVGeneration }> = [
  { arch: 'amd64', generation: 'V2' },
  { arch: 'amd64', generation: 'V1' },
  { arch: 'arm64', generation: 'V2' },
];

export interface ImageLookup {
  gallery: string;
  definition: string;
  arch: Architecture;
  generation: HyperVGeneration;
}

/** The gallery image definitions the class needs looked up, or a problem that makes none possible. */
export function imageLookups(
  nodeClass: AKSNodeClass,
  kubernetesVersion: string,
): ImageLookup[] | { problem: string } {
  const lookups: ImageLookup[] = [];
  let problem: string | undefined;
  for (const { arch, generation } of IMAGE_COMBINATIONS) {
    const choice = imageDefinitionFor({
      imageFamily: nodeClass.spec.imageFamily,
      kubernetesVersion,
      arch,
      generations: [generation],
    });
    if ('problem' in choice) problem ??= choice.problem;
    else lookups.push({ gallery: choice.gallery, definition: choice.definition, arch, generation });
  }
  return lookups.length > 0 ? lookups : { problem: problem ?? 'no image combination' };
}

export interface NodeClassStatusInput {
  nodeClass: AKSNodeClass;
  kubernetesVersion: string;
  /** Each lookup with the image ID it resolved to (the newest published version), or none. */
  resolved: ReadonlyArray<{ lookup: ImageLookup; imageId: string | undefined }> | { problem: string };
  now: Date;
}

export interface NodeClassStatusFields {
  images: AKSNodeClassImage[];
  kubernetesVersion: string;
  conditions: Condition[];
}

export function desiredNodeClassStatus(input: NodeClassStatusInput): NodeClassStatusFields {
  const generation = input.nodeClass.metadata.generation;
  const set = (conditions: Condition[] | undefined, update: ConditionUpdate): Condition[] =>
    setCondition(
      conditions,
      generation === undefined ? update : { ...update, observedGeneration: generation },
      input.now,
    );

  const versionValid = minorVersion(input.kubernetesVersion) !== undefined;
  let conditions = set(
    input.nodeClass.status?.conditions,
    versionValid
      ? {
          type: NodeClassConditions.kubernetesVersionReady,
          status: 'True',
          reason: NodeClassConditions.kubernetesVersionReady,
          message: '',
        }
      : {
          type: NodeClassConditions.kubernetesVersionReady,
          status: 'False',
          reason: 'KubernetesVersionInvalid',
          message: `the cluster's Kubernetes version "${input.kubernetesVersion}" is not a version`,
        },
  );

  const images: AKSNodeClassImage[] =
    'problem' in input.resolved
      ? []
      : input.resolved
          .filter((r): r is { lookup: ImageLookup; imageId: string } => r.imageId !== undefined)
          .map(({ lookup, imageId }) => ({
            id: imageId,
            requirements: [
              { key: ARCH_LABEL, operator: 'In', values: [lookup.arch] },
              {
                key: HYPERV_GENERATION_LABEL,
                operator: 'In',
                values: [lookup.generation === 'V2' ? '2' : '1'],
              },
            ],
          }));
  conditions = set(
    conditions,
    images.length > 0
      ? {
          type: NodeClassConditions.imagesReady,
          status: 'True',
          reason: NodeClassConditions.imagesReady,
          message: '',
        }
      : {
          type: NodeClassConditions.imagesReady,
          status: 'False',
          reason: 'ImagesNotFound',
          message:
            'problem' in input.resolved
              ? input.resolved.problem
              : `no published version of ${input.resolved.map((r) => `${r.lookup.gallery}/${r.lookup.definition}`).join(', ')}`,
        },
  );
  conditions = set(
    conditions,
    rootReadiness(conditions, [NodeClassConditions.imagesReady, NodeClassConditions.kubernetesVersionReady]),
  );
  return { images, kubernetesVersion: input.kubernetesVersion.replace(/^v/, ''), conditions };
}
