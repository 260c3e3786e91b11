// Which node image version and Kubernetes version an AKSNodeClass's nodes run: the Azure provider's
// proposal for node image and Kubernetes version controls (spec.versions, status.latestImageVersion,
// status.recentlyUsedVersions), plus the versions a failed canary rollout rejected
// (status.rolledBackVersions, ours). A pin is a request, not a fact: it is taken only when every rule
// holds, and otherwise the class keeps the versions it had (its status), so a bad pin never moves a node;
// it turns the class NotReady naming the field instead. Without a pin the class follows the control
// plane's Kubernetes version and the newest published image no rollout rejected. Status is where pins
// come from (only a version the status shows may be pinned), so no arbitrary image is ever booted, and
// launch and drift read the same status.images, so both agree on the image. Pure: the gallery's
// versions are inputs.
import type {
  AKSNodeClass,
  AKSNodeClassImage,
  AKSNodeClassStatus,
  RecentlyUsedVersion,
  RolledBackVersion,
} from '../../../models/aks-node-class.js';
import type { Architecture, HyperVGeneration } from '../../../decisions/offerings.js';
import { communityGalleryImageId, newestImageVersion, type GalleryImageVersion } from './node-image.js';
import { describeValue } from './nodeclass-validation.js';

/** How many pairs status.recentlyUsedVersions keeps (the proposal leaves the bound to the controller). */
export const RECENTLY_USED_VERSIONS_KEPT = 10;
/** How many entries status.rolledBackVersions keeps: the newest by their timestamp. */
export const ROLLED_BACK_VERSIONS_KEPT = 10;

/** One gallery image definition the class needs for an architecture and Hyper-V generation. */
export interface ImageLookup {
  gallery: string;
  definition: string;
  arch: Architecture;
  generation: HyperVGeneration;
}

/**
 * A lookup with what the gallery answered: the newest published version's image ID and, when the
 * provider lists them, every published version (without them, the newest is taken to be the only one).
 */
export interface ResolvedImage {
  lookup: ImageLookup;
  imageId: string | undefined;
  versions?: readonly GalleryImageVersion[];
}

export const ARCH_LABEL = 'kubernetes.io/arch';
export const HYPERV_GENERATION_LABEL = 'karpenter.azure.com/sku-hyperv-generation';

/** The conditions a version problem turns False, and the reasons (the proposal's, and one of ours). */
export const VersionReasons = {
  /** KubernetesVersionReady: the cluster's own version does not parse. */
  kubernetesVersionInvalid: 'KubernetesVersionInvalid',
  /** KubernetesVersionReady: spec.versions.kubernetesVersion is outside the control plane's skew. */
  controlPlaneIncompatible: 'KubernetesVersionControlPlaneIncompatible',
  /** ValidationSucceeded: spec.versions.kubernetesVersion is not major.minor.patch. */
  kubernetesVersionInvalidFormat: 'KubernetesVersionInvalidFormat',
  /** ValidationSucceeded: spec.versions.kubernetesVersion is below the effective version. */
  downgradeNotSupported: 'KubernetesVersionDowngradeNotSupported',
  /** ValidationSucceeded: spec.versions.nodeImageVersion is not status-backed, or set alone. */
  nodeImageVersionInvalid: 'NodeImageVersionInvalid',
  /** ValidationSucceeded (ours): spec.versions.nodeImageVersion is in status.rolledBackVersions. */
  nodeImageVersionRolledBack: 'NodeImageVersionRolledBack',
  /** ImagesReady: the pinned version is no longer published for any of the class's definitions. */
  requestedVersionUnavailable: 'RequestedNodeImageVersionUnavailable',
} as const;

export type VersionCondition = 'ValidationSucceeded' | 'KubernetesVersionReady' | 'ImagesReady';

/** Why a requested version is not taken: the condition it turns False, its reason and a message naming the field. */
export interface VersionProblem {
  condition: VersionCondition;
  reason: string;
  message: string;
}

// ---------------------------------------------------------------------------------------------------
// Image IDs and Kubernetes versions.

const GALLERY_IMAGE_ID = /\/images\/([^/]+)\/versions\/([^/]+)$/i;

/** The version segment of a gallery image ID (".../images/<definition>/versions/<version>"), else undefined. */
export function imageVersionOf(imageId: string): string | undefined {
  return GALLERY_IMAGE_ID.exec(imageId.trim())?.[2];
}

/** The definition segment of a gallery image ID, else undefined. */
export function imageDefinitionOf(imageId: string): string | undefined {
  return GALLERY_IMAGE_ID.exec(imageId.trim())?.[1];
}

/** The image ID without its version: which gallery definition it is, lower-cased for comparison. */
function definitionKey(imageId: string): string {
  return imageId
    .trim()
    .replace(/\/versions\/[^/]+$/i, '')
    .toLowerCase();
}

/** Whether two image IDs name the same gallery image definition (any version). */
export function sameImageDefinition(a: string, b: string): boolean {
  return definitionKey(a) === definitionKey(b);
}

export type KubernetesVersion = readonly [major: number, minor: number, patch: number];

/** major.minor.patch of a version ("1.33.2", "v1.33.2", "v1.33.2-akslts"), else undefined. */
export function parseKubernetesVersion(version: string): KubernetesVersion | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)([-+].*)?$/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** The form spec.versions.kubernetesVersion must take, as the proposal and the CRD ask. */
const FULL_VERSION = /^\d+\.\d+\.\d+$/;

export function compareKubernetesVersions(a: KubernetesVersion, b: KubernetesVersion): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether two versions name the same major.minor.patch; false when either does not parse. */
export function sameKubernetesVersion(a: string, b: string): boolean {
  const left = parseKubernetesVersion(a);
  const right = parseKubernetesVersion(b);
  return left !== undefined && right !== undefined && compareKubernetesVersions(left, right) === 0;
}

/**
 * Why a node version breaks AKS's skew rules against the control plane, else undefined: same major,
 * minor not above the control plane's and at most 3 behind, and on the same minor a patch not above.
 */
export function kubernetesSkewProblem(
  node: KubernetesVersion,
  controlPlane: KubernetesVersion,
): string | undefined {
  if (node[0] !== controlPlane[0]) return 'has another major version than';
  if (node[1] > controlPlane[1]) return 'is a newer minor version than';
  if (controlPlane[1] - node[1] > 3) return 'is more than 3 minor versions behind';
  if (node[1] === controlPlane[1] && node[2] > controlPlane[2]) return 'is a newer patch version than';
  return undefined;
}

const normalized = (version: string): string => version.trim().replace(/^v/, '');

// ---------------------------------------------------------------------------------------------------
// The effective Kubernetes version.

export interface KubernetesVersionChoice {
  /** The version the class's images are looked up for and its nodes launched with. */
  kubernetesVersion: string;
  /** Why spec.versions.kubernetesVersion (or the cluster's own version) cannot be taken. */
  problem?: VersionProblem;
}

/**
 * spec.versions.kubernetesVersion when it is major.minor.patch, within the control plane's skew and not
 * below the class's effective version; else the effective version the status has (the newest valid, the
 * control plane's, on a class without one). Unpinned, the control plane's.
 */
export function chooseKubernetesVersion(
  nodeClass: AKSNodeClass,
  controlPlaneVersion: string,
): KubernetesVersionChoice {
  const controlPlane = normalized(controlPlaneVersion);
  const current = nodeClass.status?.kubernetesVersion;
  const controlPlaneParsed = parseKubernetesVersion(controlPlane);
  const invalidControlPlane: VersionProblem = {
    condition: 'KubernetesVersionReady',
    reason: VersionReasons.kubernetesVersionInvalid,
    message: `the cluster's Kubernetes version "${controlPlaneVersion}" is not a version`,
  };
  const pin: unknown = nodeClass.spec.versions?.kubernetesVersion;
  if (pin === undefined) {
    return controlPlaneParsed
      ? { kubernetesVersion: controlPlane }
      : { kubernetesVersion: current ?? controlPlane, problem: invalidControlPlane };
  }
  const keep = (problem: VersionProblem): KubernetesVersionChoice => ({
    kubernetesVersion: current ?? controlPlane,
    problem,
  });
  const field = `spec.versions.kubernetesVersion ${describeValue(pin)}`;
  const parsed = typeof pin === 'string' && FULL_VERSION.test(pin) ? parseKubernetesVersion(pin) : undefined;
  if (typeof pin !== 'string' || !parsed) {
    return keep({
      condition: 'ValidationSucceeded',
      reason: VersionReasons.kubernetesVersionInvalidFormat,
      message: `${field} is not a full major.minor.patch version`,
    });
  }
  if (!controlPlaneParsed) {
    return keep({
      ...invalidControlPlane,
      message: `${invalidControlPlane.message}: ${field} cannot be checked against it`,
    });
  }
  const skew = kubernetesSkewProblem(parsed, controlPlaneParsed);
  if (skew) {
    return keep({
      condition: 'KubernetesVersionReady',
      reason: VersionReasons.controlPlaneIncompatible,
      message: `${field} ${skew} the control plane's ${controlPlane}`,
    });
  }
  const currentParsed = current === undefined ? undefined : parseKubernetesVersion(current);
  if (currentParsed && compareKubernetesVersions(parsed, currentParsed) < 0) {
    return keep({
      condition: 'ValidationSucceeded',
      reason: VersionReasons.downgradeNotSupported,
      message: `${field} is below the class's effective Kubernetes version ${current}: nodes are never rolled back to an older Kubernetes version`,
    });
  }
  return { kubernetesVersion: pin };
}

/**
 * The Kubernetes version a launch of the class uses (image definition, bootstrap, sizing): the effective
 * one its status has, else the one its status will have.
 */
export function effectiveKubernetesVersion(nodeClass: AKSNodeClass, controlPlaneVersion: string): string {
  return (
    nodeClass.status?.kubernetesVersion ??
    chooseKubernetesVersion(nodeClass, controlPlaneVersion).kubernetesVersion
  );
}

// ---------------------------------------------------------------------------------------------------
// The effective images.

/** The status image for a lookup: its ID with the requirements a VM size must meet to boot it. */
export function imageFor(lookup: ImageLookup, imageId: string): AKSNodeClassImage {
  return {
    id: imageId,
    requirements: [
      { key: ARCH_LABEL, operator: 'In', values: [lookup.arch] },
      { key: HYPERV_GENERATION_LABEL, operator: 'In', values: [lookup.generation === 'V2' ? '2' : '1'] },
    ],
  };
}

/** The rollout's entry that rejects `imageVersion` with `kubernetesVersion`, if any. */
export function rolledBackEntry(
  rolledBack: readonly RolledBackVersion[] | undefined,
  imageVersion: string,
  kubernetesVersion: string,
): RolledBackVersion | undefined {
  if (!Array.isArray(rolledBack)) return undefined;
  return rolledBack.find(
    (entry) =>
      entry.imageVersion === imageVersion &&
      (entry.kubernetesVersion === undefined ||
        sameKubernetesVersion(entry.kubernetesVersion, kubernetesVersion)),
  );
}

/** The versions a definition publishes: the listed ones, else the newest the lookup resolved to. */
function publishedVersions(resolved: ResolvedImage): readonly GalleryImageVersion[] {
  if (resolved.versions) return resolved.versions;
  if (resolved.imageId === undefined) return [];
  return [{ name: imageVersionOf(resolved.imageId) ?? resolved.imageId }];
}

/** The ID of `version` of a lookup's definition: the ID the gallery answered, when it is that version. */
function imageIdFor(resolved: ResolvedImage, version: string): string {
  const { imageId, lookup } = resolved;
  if (imageId !== undefined && (imageVersionOf(imageId) ?? imageId) === version) return imageId;
  return communityGalleryImageId(lookup.gallery, lookup.definition, version);
}

/** The versions the status shows, which are the only ones a pin may name. */
export function statusBackedVersions(status: AKSNodeClassStatus | undefined): {
  latest: string | undefined;
  current: string[];
  recentlyUsed: string[];
} {
  const images = Array.isArray(status?.images) ? status.images : [];
  const recent = Array.isArray(status?.recentlyUsedVersions) ? status.recentlyUsedVersions : [];
  const unique = (values: (string | undefined)[]): string[] => [
    ...new Set(values.filter((v): v is string => typeof v === 'string')),
  ];
  return {
    latest: status?.latestImageVersion,
    current: unique(images.map((image) => imageVersionOf(image.id))),
    recentlyUsed: unique(recent.map((entry) => entry.imageVersion)),
  };
}

export interface EffectiveVersionsInput {
  nodeClass: AKSNodeClass;
  /** chooseKubernetesVersion's answer for the class: the version `resolved` was looked up for. */
  kubernetes: KubernetesVersionChoice;
  /** The class's lookups for that version with what the gallery publishes; [] when none can be made. */
  resolved: readonly ResolvedImage[];
}

export interface EffectiveVersions {
  /** The effective images, preferred first: new ones, or the status's kept. */
  images: AKSNodeClassImage[];
  kubernetesVersion: string;
  /** The newest version any of the class's definitions publishes, else the status's. */
  latestImageVersion: string | undefined;
  /** Every reason a requested version was not taken; the old effective versions stay when there is one. */
  problems: VersionProblem[];
  /** Whether some definition publishes a version no rollout rejected (ImagesReady, unless a pin says otherwise). */
  resolvable: boolean;
}

/**
 * The class's effective versions. Pinned (both fields set, the image version status-backed, not rolled
 * back, published for at least one definition; the Kubernetes version valid): the pinned version of each
 * definition that publishes it, even when a newer one is published. Unpinned: each definition's newest
 * version no rollout rejected. When a requested version cannot be taken, the status's effective images
 * and Kubernetes version stay; a class without effective images takes the newest valid instead.
 */
export function chooseEffectiveVersions(input: EffectiveVersionsInput): EffectiveVersions {
  const { nodeClass, kubernetes, resolved } = input;
  const status = nodeClass.status;
  const kubernetesVersion = kubernetes.kubernetesVersion;
  const rolledBack = status?.rolledBackVersions;
  const allVersions = resolved.flatMap(publishedVersions);
  const latestImageVersion = newestImageVersion(allVersions) ?? status?.latestImageVersion;

  const automatic = resolved.flatMap((r) => {
    const version = newestImageVersion(
      publishedVersions(r).filter((v) => !rolledBackEntry(rolledBack, v.name, kubernetesVersion)),
    );
    return version === undefined ? [] : [imageFor(r.lookup, imageIdFor(r, version))];
  });

  const problems: VersionProblem[] = kubernetes.problem ? [kubernetes.problem] : [];
  let pinned: AKSNodeClassImage[] | undefined;
  const pin: unknown = nodeClass.spec.versions?.nodeImageVersion;
  if (pin !== undefined) {
    const problem = imagePinProblem(pin, nodeClass, kubernetesVersion, resolved);
    if (problem) problems.push(problem);
    else {
      pinned = resolved
        .filter((r) => publishedVersions(r).some((v) => v.name === pin))
        .map((r) => imageFor(r.lookup, imageIdFor(r, pin as string)));
    }
  }

  const current = Array.isArray(status?.images) ? status.images : [];
  const chosen =
    problems.length > 0 && current.length > 0
      ? { images: current, kubernetesVersion: status?.kubernetesVersion ?? kubernetesVersion }
      : pinned
        ? { images: pinned, kubernetesVersion }
        : automatic.length > 0
          ? { images: automatic, kubernetesVersion }
          : {
              // Nothing published that no rollout rejected: the images still effective stay, less any
              // a rollout rejected since.
              images: current.filter((image) => {
                const version = imageVersionOf(image.id);
                return version === undefined || !rolledBackEntry(rolledBack, version, kubernetesVersion);
              }),
              kubernetesVersion,
            };
  return { ...chosen, latestImageVersion, problems, resolvable: automatic.length > 0 };
}

function imagePinProblem(
  pin: unknown,
  nodeClass: AKSNodeClass,
  kubernetesVersion: string,
  resolved: readonly ResolvedImage[],
): VersionProblem | undefined {
  const field = `spec.versions.nodeImageVersion ${describeValue(pin)}`;
  const invalid = (message: string): VersionProblem => ({
    condition: 'ValidationSucceeded',
    reason: VersionReasons.nodeImageVersionInvalid,
    message,
  });
  if (nodeClass.spec.versions?.kubernetesVersion === undefined) {
    return invalid(
      `${field} needs spec.versions.kubernetesVersion beside it: an image version is pinned only with the Kubernetes version it runs`,
    );
  }
  const backed = statusBackedVersions(nodeClass.status);
  if (
    typeof pin !== 'string' ||
    !(pin === backed.latest || backed.current.includes(pin) || backed.recentlyUsed.includes(pin))
  ) {
    const recent = backed.recentlyUsed.length > 0 ? backed.recentlyUsed.join(', ') : 'none';
    return invalid(
      `${field} is not a version this class has used (latest ${backed.latest ?? 'none'}; recently used: ${recent})`,
    );
  }
  const rejected = rolledBackEntry(nodeClass.status?.rolledBackVersions, pin, kubernetesVersion);
  if (rejected) {
    return {
      condition: 'ValidationSucceeded',
      reason: VersionReasons.nodeImageVersionRolledBack,
      message:
        `${field} was rolled back by NodePool ${rejected.nodePool} at ${rejected.timestamp}: ${rejected.reason} ` +
        `(remove its entry from status.rolledBackVersions to allow it again)`,
    };
  }
  if (!resolved.some((r) => publishedVersions(r).some((v) => v.name === pin))) {
    const definitions = resolved.map((r) => r.lookup.definition).join(', ') || 'none';
    return {
      condition: 'ImagesReady',
      reason: VersionReasons.requestedVersionUnavailable,
      message: `${field} is not published for any image definition of the class (${definitions}, Kubernetes ${kubernetesVersion})`,
    };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// The history lists.

/**
 * status.recentlyUsedVersions with the effective pair first: prepended (and removed further down) when
 * it is not already the head, then bounded; the same array when nothing changes.
 */
export function withRecentlyUsed(
  recentlyUsed: readonly RecentlyUsedVersion[] | undefined,
  pair: { imageVersion: string; kubernetesVersion: string } | undefined,
  now: Date,
): RecentlyUsedVersion[] {
  const list = Array.isArray(recentlyUsed) ? (recentlyUsed as RecentlyUsedVersion[]) : [];
  if (!pair) return list;
  const same = (entry: RecentlyUsedVersion): boolean =>
    entry.imageVersion === pair.imageVersion && entry.kubernetesVersion === pair.kubernetesVersion;
  const head = list[0];
  if (head && same(head) && list.length <= RECENTLY_USED_VERSIONS_KEPT) return list;
  if (head && same(head)) return list.slice(0, RECENTLY_USED_VERSIONS_KEPT);
  return [
    {
      timestampUsed: now.toISOString(),
      imageVersion: pair.imageVersion,
      kubernetesVersion: pair.kubernetesVersion,
    },
    ...list.filter((entry) => !same(entry)),
  ].slice(0, RECENTLY_USED_VERSIONS_KEPT);
}

/** The effective pair the images and Kubernetes version make: the preferred image's version. */
export function effectivePair(
  images: readonly AKSNodeClassImage[],
  kubernetesVersion: string,
): { imageVersion: string; kubernetesVersion: string } | undefined {
  const first = images[0];
  const imageVersion = first === undefined ? undefined : imageVersionOf(first.id);
  return imageVersion === undefined ? undefined : { imageVersion, kubernetesVersion };
}

/**
 * status.rolledBackVersions as the rollout wrote it, every entry kept in its order, only bounded: past
 * ROLLED_BACK_VERSIONS_KEPT the oldest by timestamp go (an unreadable timestamp counts as oldest). The
 * same array when within the bound.
 */
export function boundedRolledBackVersions(
  rolledBack: readonly RolledBackVersion[] | undefined,
): RolledBackVersion[] | undefined {
  if (!Array.isArray(rolledBack)) return undefined;
  const list = rolledBack as RolledBackVersion[];
  if (list.length <= ROLLED_BACK_VERSIONS_KEPT) return list;
  const time = (entry: RolledBackVersion): number => {
    const at = typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : NaN;
    return Number.isNaN(at) ? -Infinity : at;
  };
  const kept = new Set(
    list
      .map((entry, index) => ({ index, at: time(entry) }))
      // Newest first; of equal times the later in the list, which the rollout wrote last.
      .sort((a, b) => b.at - a.at || b.index - a.index)
      .slice(0, ROLLED_BACK_VERSIONS_KEPT)
      .map((e) => e.index),
  );
  return list.filter((_, index) => kept.has(index));
}
