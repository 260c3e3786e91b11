// Which AKS node image a VM boots: the image family of its AKSNodeClass, the cluster's Kubernetes version
// and the VM size's CPU architecture and Hyper-V generation select one image definition in AKS's public
// community galleries (the images AgentBaker builds, whose provisioning reads the AKSNodeConfig in the
// custom data). The version is the newest one the gallery publishes, unless the AKSNodeClass pins one.
// Definition names and galleries follow the Azure provider's image families; pure, no I/O.
import { atLeast, minorVersion } from '../../../decisions/kubernetes-version.js';
import type { Architecture, HyperVGeneration } from '../../../decisions/offerings.js';

/** AKS's public community galleries (their "public names", as ARM addresses them). */
export const AKS_COMMUNITY_GALLERIES = {
  ubuntu: 'AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2',
  azureLinux: 'AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b',
} as const;

/** The OS the image runs, for the kubernetes.azure.com/os-sku label and the Kubernetes version rules. */
export type NodeOsSku = 'Ubuntu2204' | 'Ubuntu2404' | 'AzureLinux2' | 'AzureLinux3';

interface ImageDefinitions {
  gallery: string;
  /** The definition per architecture and generation; a missing entry is a combination AKS does not build. */
  amd64: { V2: string; V1: string };
  arm64: { V2: string };
}

const DEFINITIONS: Readonly<Record<NodeOsSku, ImageDefinitions>> = {
  Ubuntu2204: {
    gallery: AKS_COMMUNITY_GALLERIES.ubuntu,
    amd64: { V2: '2204gen2containerd', V1: '2204containerd' },
    arm64: { V2: '2204gen2arm64containerd' },
  },
  Ubuntu2404: {
    gallery: AKS_COMMUNITY_GALLERIES.ubuntu,
    amd64: { V2: '2404gen2containerd', V1: '2404containerd' },
    arm64: { V2: '2404gen2arm64containerd' },
  },
  AzureLinux2: {
    gallery: AKS_COMMUNITY_GALLERIES.azureLinux,
    amd64: { V2: 'V2gen2', V1: 'V2' },
    arm64: { V2: 'V2gen2arm64' },
  },
  AzureLinux3: {
    gallery: AKS_COMMUNITY_GALLERIES.azureLinux,
    amd64: { V2: 'V3gen2', V1: 'V3' },
    arm64: { V2: 'V3gen2arm64' },
  },
};

export interface ImageSelectionInput {
  /** spec.imageFamily of the AKSNodeClass; unset means "Ubuntu", as the CRD defaults it. */
  imageFamily: string | undefined;
  /** The cluster's Kubernetes version, "1.33.2" or "v1.33.2". */
  kubernetesVersion: string;
  arch: Architecture;
  /** The generations the VM size can boot (its HyperVGenerations capability). */
  generations: readonly HyperVGeneration[];
}

export interface ImageDefinitionChoice {
  gallery: string;
  definition: string;
  osSku: NodeOsSku;
  generation: HyperVGeneration;
}

export type ImageDefinitionResult = ImageDefinitionChoice | { problem: string };

/**
 * The OS an image family means for a Kubernetes version: "Ubuntu" follows AKS's default (24.04 from
 * 1.34 on, else 22.04) and "AzureLinux" is Azure Linux 3 from 1.32 on, else 2, as in the Azure provider.
 */
export function osSkuFor(
  imageFamily: string | undefined,
  version: readonly [number, number],
): NodeOsSku | undefined {
  switch (imageFamily ?? 'Ubuntu') {
    case 'Ubuntu':
      return atLeast(version, 1, 34) ? 'Ubuntu2404' : 'Ubuntu2204';
    case 'Ubuntu2204':
      return 'Ubuntu2204';
    case 'Ubuntu2404':
      return 'Ubuntu2404';
    case 'AzureLinux':
      return atLeast(version, 1, 32) ? 'AzureLinux3' : 'AzureLinux2';
    default:
      return undefined;
  }
}

/** The gallery image definition for a VM, Generation 2 first as the provider prefers it. */
export function imageDefinitionFor(input: ImageSelectionInput): ImageDefinitionResult {
  const version = minorVersion(input.kubernetesVersion);
  if (!version) return { problem: `Kubernetes version "${input.kubernetesVersion}" is not a version` };
  const family = input.imageFamily ?? 'Ubuntu';
  const osSku = osSkuFor(family, version);
  if (!osSku)
    return { problem: `imageFamily "${family}" is not one of Ubuntu, Ubuntu2204, Ubuntu2404, AzureLinux` };
  const definitions = DEFINITIONS[osSku];
  const byGeneration: Partial<Record<HyperVGeneration, string>> = definitions[input.arch];
  for (const generation of ['V2', 'V1'] as const) {
    const definition = byGeneration[generation];
    if (definition && input.generations.includes(generation)) {
      return { gallery: definitions.gallery, definition, osSku, generation };
    }
  }
  return {
    problem:
      `imageFamily "${family}" (${osSku}) has no ${input.arch} image for Hyper-V generation ` +
      `${input.generations.join('/') || 'none'}`,
  };
}

export interface GalleryImageVersion {
  /** "202608.20.0". */
  name: string;
  publishedDate?: Date | string;
}

/** The newest version by publication date (then by name), as the provider picks it; undefined if none. */
export function newestImageVersion(versions: readonly GalleryImageVersion[]): string | undefined {
  const time = (v: GalleryImageVersion): number =>
    v.publishedDate === undefined ? 0 : new Date(v.publishedDate).getTime() || 0;
  let best: GalleryImageVersion | undefined;
  for (const version of versions) {
    if (
      !best ||
      time(version) > time(best) ||
      (time(version) === time(best) && version.name.localeCompare(best.name, 'en', { numeric: true }) > 0)
    ) {
      best = version;
    }
  }
  return best?.name;
}

/** The ID a VM's storageProfile.imageReference.communityGalleryImageId takes. */
export function communityGalleryImageId(gallery: string, definition: string, version: string): string {
  return `/CommunityGalleries/${gallery}/images/${definition}/versions/${version}`;
}
