// The AKSNodeClass status the Azure provider keeps (pkg/controllers/nodeclass/status), with its proposal
// for node image and Kubernetes version controls: the effective images (status.images, one per
// architecture and Hyper-V generation with the requirements a VM size must meet to boot it, preferred
// first), the effective Kubernetes version, the control plane's, the newest published image version,
// the effective pairs recently used, the versions a rollout rolled back (kept as found, bounded), and
// the conditions ImagesReady, KubernetesVersionReady, ValidationSucceeded (every field that reaches a
// node parses by its type, nodeclass-validation.ts, and spec.versions asks for versions the class may
// take, node-image-versions.ts; False names the field) and Ready (True when all three are; when it is
// False, the messages of the False ones follow Ready's, so Ready names the field too). The provider also
// checks subnets (SubnetsReady) against its own VNet; this app validates a subnet when a launch uses it
// instead, so Ready here depends on the conditions it can decide. Pure: the image lookups are inputs.
import type {
  AKSNodeClass,
  AKSNodeClassImage,
  RecentlyUsedVersion,
  RolledBackVersion,
} from '../../../models/index.js';
import type { Condition } from '../../../models/kube.js';
import { findCondition, setCondition, type ConditionUpdate } from '../../../decisions/conditions.js';
import { imageDefinitionFor } from './node-image.js';
import {
  boundedRolledBackVersions,
  chooseEffectiveVersions,
  chooseKubernetesVersion,
  effectivePair,
  withRecentlyUsed,
  type ImageLookup,
  type ResolvedImage,
  type VersionCondition,
  type VersionProblem,
} from './node-image-versions.js';
import { describeFieldProblems, nodeClassProblems } from './nodeclass-validation.js';
import { rootReadiness } from '../../../decisions/nodepool-status.js';
import type { Architecture, HyperVGeneration } from '../../../decisions/offerings.js';

export type { ImageLookup } from './node-image-versions.js';

export const NodeClassConditions = {
  imagesReady: 'ImagesReady',
  kubernetesVersionReady: 'KubernetesVersionReady',
  validationSucceeded: 'ValidationSucceeded',
  ready: 'Ready',
} as const;

/** ValidationSucceeded=False's reason: a field of the spec does not parse by its type. */
export const INVALID_FIELD_REASON = 'InvalidFieldValue';

/** The combinations the provider lists, in its order of preference. */
export const IMAGE_COMBINATIONS: ReadonlyArray<{ arch: Architecture; generation: HyperVGeneration }> = [
  { arch: 'amd64', generation: 'V2' },
  { arch: 'amd64', generation: 'V1' },
  { arch: 'arm64', generation: 'V2' },
];

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
  /** The control plane's Kubernetes version (the cluster setting). */
  kubernetesVersion: string;
  /**
   * Each lookup for the class's effective Kubernetes version (chooseKubernetesVersion) with the image
   * its newest published version is, or none, and every published version when the provider lists them.
   */
  resolved: readonly ResolvedImage[] | { problem: string };
  now: Date;
}

export interface NodeClassStatusFields {
  images: AKSNodeClassImage[];
  kubernetesVersion: string;
  controlPlaneKubernetesVersion: string;
  latestImageVersion?: string;
  recentlyUsedVersions: RecentlyUsedVersion[];
  /** Only when bounding changed what the rollout wrote; otherwise the status's entries stay untouched. */
  rolledBackVersions?: RolledBackVersion[];
  conditions: Condition[];
}

const READY_DEPENDENTS = [
  NodeClassConditions.imagesReady,
  NodeClassConditions.kubernetesVersionReady,
  NodeClassConditions.validationSucceeded,
];

/**
 * Ready as operatorpkg computes it (reason UnhealthyDependents, "Type=Status" for each), and, when it is
 * False, the messages of the False dependents after that, validation first: the field a bad value is in,
 * read from Ready alone (and from each NodePool's NodeClassReady, which copies it).
 */
function classReadiness(conditions: readonly Condition[]): ConditionUpdate {
  const root = rootReadiness(conditions, READY_DEPENDENTS);
  if (root.status !== 'False') return root;
  const messages = [
    NodeClassConditions.validationSucceeded,
    NodeClassConditions.kubernetesVersionReady,
    NodeClassConditions.imagesReady,
  ]
    .map((type) => findCondition(conditions, type))
    .filter((c): c is Condition => c?.status === 'False' && c.message !== '')
    .map((c) => c.message);
  return messages.length > 0 ? { ...root, message: `${root.message}: ${messages.join('; ')}` } : root;
}

/** The problems of one condition as one update: the first one's reason, every message. */
function problemsOf(
  problems: readonly VersionProblem[],
  condition: VersionCondition,
): VersionProblem | undefined {
  const own = problems.filter((p) => p.condition === condition);
  const first = own[0];
  return first && { ...first, message: own.map((p) => p.message).join('; ') };
}

export function desiredNodeClassStatus(input: NodeClassStatusInput): NodeClassStatusFields {
  const { nodeClass } = input;
  const generation = nodeClass.metadata.generation;
  const set = (conditions: Condition[] | undefined, update: ConditionUpdate): Condition[] =>
    setCondition(
      conditions,
      generation === undefined ? update : { ...update, observedGeneration: generation },
      input.now,
    );
  const ready = (type: string): ConditionUpdate => ({ type, status: 'True', reason: type, message: '' });
  const falseFor = (type: string, problem: VersionProblem): ConditionUpdate => ({
    type,
    status: 'False',
    reason: problem.reason,
    message: problem.message,
  });

  const kubernetes = chooseKubernetesVersion(nodeClass, input.kubernetesVersion);
  const effective = chooseEffectiveVersions({
    nodeClass,
    kubernetes,
    resolved: 'problem' in input.resolved ? [] : input.resolved,
  });

  const versionProblem = problemsOf(effective.problems, 'KubernetesVersionReady');
  let conditions = set(
    nodeClass.status?.conditions,
    versionProblem
      ? falseFor(NodeClassConditions.kubernetesVersionReady, versionProblem)
      : ready(NodeClassConditions.kubernetesVersionReady),
  );

  const imageProblem = problemsOf(effective.problems, 'ImagesReady');
  conditions = set(
    conditions,
    imageProblem
      ? falseFor(NodeClassConditions.imagesReady, imageProblem)
      : effective.resolvable
        ? ready(NodeClassConditions.imagesReady)
        : {
            type: NodeClassConditions.imagesReady,
            status: 'False',
            reason: 'ImagesNotFound',
            message:
              'problem' in input.resolved
                ? input.resolved.problem
                : input.resolved.some((r) => r.imageId !== undefined || (r.versions?.length ?? 0) > 0)
                  ? `every published version of ${definitionsOf(input.resolved)} was rolled back (status.rolledBackVersions)`
                  : `no published version of ${definitionsOf(input.resolved)}`,
          },
  );

  const fieldProblems = nodeClassProblems(nodeClass);
  const validationProblem = problemsOf(effective.problems, 'ValidationSucceeded');
  const validationMessages = [
    ...(fieldProblems.length > 0 ? [describeFieldProblems(fieldProblems)] : []),
    ...(validationProblem ? [validationProblem.message] : []),
  ];
  conditions = set(
    conditions,
    validationMessages.length === 0
      ? ready(NodeClassConditions.validationSucceeded)
      : {
          type: NodeClassConditions.validationSucceeded,
          status: 'False',
          reason:
            fieldProblems.length > 0
              ? INVALID_FIELD_REASON
              : (validationProblem?.reason ?? INVALID_FIELD_REASON),
          message: validationMessages.join('; '),
        },
  );
  conditions = set(conditions, classReadiness(conditions));

  const rolledBack = nodeClass.status?.rolledBackVersions;
  const bounded = boundedRolledBackVersions(rolledBack);
  return {
    images: effective.images,
    kubernetesVersion: effective.kubernetesVersion,
    controlPlaneKubernetesVersion: input.kubernetesVersion.trim().replace(/^v/, ''),
    ...(effective.latestImageVersion !== undefined && { latestImageVersion: effective.latestImageVersion }),
    recentlyUsedVersions: withRecentlyUsed(
      nodeClass.status?.recentlyUsedVersions,
      effectivePair(effective.images, effective.kubernetesVersion),
      input.now,
    ),
    ...(bounded !== undefined && bounded !== rolledBack && { rolledBackVersions: bounded }),
    conditions,
  };
}

function definitionsOf(resolved: readonly ResolvedImage[]): string {
  return resolved.map((r) => `${r.lookup.gallery}/${r.lookup.definition}`).join(', ');
}
