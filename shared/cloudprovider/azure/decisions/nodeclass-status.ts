// The AKSNodeClass status the Azure provider keeps (pkg/controllers/nodeclass/status): the images the
// class resolves to, one per architecture and Hyper-V generation with the requirements a VM size must
// meet to boot it (status.images, preferred first), the cluster's Kubernetes version, and the conditions
// ImagesReady, KubernetesVersionReady, ValidationSucceeded (every field that reaches a node parses by its
// type, nodeclass-validation.ts; False names the field) and Ready (True when all three are; with
// ValidationSucceeded False, its message follows Ready's, so Ready names the field too). The provider also checks subnets (SubnetsReady) against its own VNet; this app validates a subnet
// when a launch uses it instead, so Ready here depends on the conditions it can decide. Pure: the image
// lookups are inputs.
import type { AKSNodeClass, AKSNodeClassImage } from '../../../models/index.js';
import type { Condition } from '../../../models/kube.js';
import { findCondition, setCondition, type ConditionUpdate } from '../../../decisions/conditions.js';
import { minorVersion } from '../../../decisions/kubernetes-version.js';
import { imageDefinitionFor } from './node-image.js';
import { describeFieldProblems, nodeClassProblems } from './nodeclass-validation.js';
import { rootReadiness } from '../../../decisions/nodepool-status.js';
import type { Architecture, HyperVGeneration } from '../../../decisions/offerings.js';

export const NodeClassConditions = {
  imagesReady: 'ImagesReady',
  kubernetesVersionReady: 'KubernetesVersionReady',
  validationSucceeded: 'ValidationSucceeded',
  ready: 'Ready',
} as const;

/** ValidationSucceeded=False's reason: a field of the spec does not parse by its type. */
export const INVALID_FIELD_REASON = 'InvalidFieldValue';

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

const READY_DEPENDENTS = [
  NodeClassConditions.imagesReady,
  NodeClassConditions.kubernetesVersionReady,
  NodeClassConditions.validationSucceeded,
];

/**
 * Ready as operatorpkg computes it (reason UnhealthyDependents, "Type=Status" for each), and, when
 * validation failed, its message after that: the field a bad value is in, read from Ready alone (and from
 * each NodePool's NodeClassReady, which copies it).
 */
function classReadiness(conditions: readonly Condition[]): ConditionUpdate {
  const root = rootReadiness(conditions, READY_DEPENDENTS);
  const validation = findCondition(conditions, NodeClassConditions.validationSucceeded);
  if (root.status !== 'False' || validation?.status !== 'False') return root;
  return { ...root, message: `${root.message}: ${validation.message}` };
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
  const problems = nodeClassProblems(input.nodeClass);
  conditions = set(
    conditions,
    problems.length === 0
      ? {
          type: NodeClassConditions.validationSucceeded,
          status: 'True',
          reason: NodeClassConditions.validationSucceeded,
          message: '',
        }
      : {
          type: NodeClassConditions.validationSucceeded,
          status: 'False',
          reason: INVALID_FIELD_REASON,
          message: describeFieldProblems(problems),
        },
  );
  conditions = set(conditions, classReadiness(conditions));
  return { images, kubernetesVersion: input.kubernetesVersion.replace(/^v/, ''), conditions };
}
