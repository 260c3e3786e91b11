// The AKS node images the emulator's community galleries publish: every definition AKS builds today for
// Ubuntu 22.04, Ubuntu 24.04 and Azure Linux 3 (Azure Linux 2 is retired, so its definitions have no
// version), each with two weekly versions at start, listed as
// GET /subscriptions/{s}/providers/Microsoft.Compute/locations/{l}/communityGalleries/{g}/images/{d}/versions.
// A VM PUT whose communityGalleryImageId names an unknown version is refused as ARM refuses it.
//
// The versions are state of each emulator, not constants: AKS publishes a new version of every definition
// about weekly and now and then withdraws a bad one, and node image rollouts can only be tested against a
// gallery that changes under them. Each version also carries how a VM booted from it behaves (healthy, or
// one of the ways a bad image shows), which the kubelet simulator reads by the VM's image ID.
import { ArmError } from './errors.js';
import { isObject } from './vm-spec.js';

const UBUNTU = 'AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2';
const AZURE_LINUX = 'AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b';

/**
 * How a VM booted from an image version behaves once the kubelet simulator runs it:
 * - `healthy`: as every node does today;
 * - `kubeletNeverReady`: the Node registers but kubelet never posts Ready=True (the CNI never comes up);
 * - `podsCrash`: the Node goes Ready, but the containers of every pod that is not a DaemonSet's crash-loop;
 * - `unhealthyAfterAMinute`: the Node goes Ready, then a minute later the node problem detector sets
 *   kubernetes.azure.com/NodeHealthy=False.
 */
export type NodeImageBehavior = 'healthy' | 'kubeletNeverReady' | 'podsCrash' | 'unhealthyAfterAMinute';

export const nodeImageBehaviors: readonly NodeImageBehavior[] = [
  'healthy',
  'kubeletNeverReady',
  'podsCrash',
  'unhealthyAfterAMinute',
];

export interface NodeImageVersionInput {
  /** `Major.Minor.Patch`, as gallery image versions are named (AKS's are `YYYYMM.DD.N`). */
  version: string;
  /** Default: now, and never before a version already published, so that the new one is the newest. */
  publishedDate?: Date;
  /** Default `healthy` (for a version published again: what it had). */
  behavior?: NodeImageBehavior;
}

/** One version, as published for every definition of every gallery at once (AKS builds them together). */
export interface NodeImageVersion {
  version: string;
  /** ISO 8601. */
  publishedDate: string;
  behavior: NodeImageBehavior;
  /** Listed with `excludeFromLatest: true`: a VM may still name it, "latest" never picks it. */
  excludeFromLatest: boolean;
  /**
   * No longer listed, and a VM PUT naming it is refused; VMs already booted from it keep running it, so
   * its behaviour still applies to them.
   */
  withdrawn: boolean;
}

export interface UnpublishOptions {
  /** Keep the version listed and bootable, marked excludeFromLatest, instead of withdrawing it. */
  excludeFromLatest?: boolean;
}

const DEFINITIONS: readonly [string, string][] = [
  [UBUNTU, '2204gen2containerd'],
  [UBUNTU, '2204containerd'],
  [UBUNTU, '2204gen2arm64containerd'],
  [UBUNTU, '2404gen2containerd'],
  [UBUNTU, '2404containerd'],
  [UBUNTU, '2404gen2arm64containerd'],
  [AZURE_LINUX, 'V3gen2'],
  [AZURE_LINUX, 'V3'],
  [AZURE_LINUX, 'V3gen2arm64'],
];

/** Azure Linux 2 is retired: its definitions still exist but publish no version any more. */
const RETIRED_DEFINITIONS: readonly [string, string][] = [
  [AZURE_LINUX, 'V2gen2'],
  [AZURE_LINUX, 'V2'],
  [AZURE_LINUX, 'V2gen2arm64'],
];

const VERSIONS: readonly [string, string][] = [
  ['202608.13.0', '2026-08-13T00:00:00Z'],
  ['202608.20.0', '2026-08-20T00:00:00Z'],
];

const VERSION_NAME = /^\d{1,10}\.\d{1,10}\.\d{1,10}$/;

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

const COMMUNITY_IMAGE_ID = /^\/CommunityGalleries\/([^/]+)\/images\/([^/]+)\/versions\/([^/]+)$/i;

/** The parts of a communityGalleryImageId; undefined for anything else (a marketplace or private image). */
export function parseCommunityGalleryImageId(
  id: string | undefined,
): { gallery: string; definition: string; version: string } | undefined {
  const match = id === undefined ? null : COMMUNITY_IMAGE_ID.exec(id);
  if (!match) return undefined;
  return { gallery: match[1] ?? '', definition: match[2] ?? '', version: match[3] ?? '' };
}

/** `storageProfile.imageReference.communityGalleryImageId` of a VM's properties, when it has one. */
export function communityGalleryImageIdOf(properties: Record<string, unknown>): string | undefined {
  const storageProfile = properties.storageProfile;
  const imageReference = isObject(storageProfile) ? storageProfile.imageReference : undefined;
  const id = isObject(imageReference) ? imageReference.communityGalleryImageId : undefined;
  return typeof id === 'string' ? id : undefined;
}

export class NodeImageGallery {
  /** By lower-case version name. */
  readonly #versions = new Map<string, NodeImageVersion>();

  constructor() {
    this.reset();
  }

  /** Back to the versions published at start, all healthy. */
  reset(): void {
    this.#versions.clear();
    for (const [version, publishedDate] of VERSIONS) {
      this.#versions.set(version.toLowerCase(), {
        version,
        publishedDate,
        behavior: 'healthy',
        excludeFromLatest: false,
        withdrawn: false,
      });
    }
  }

  /**
   * Publishes a version for every definition of every gallery; publishing a known version again lists it
   * again (not withdrawn, not excluded) with the date and behaviour given, else those it had.
   */
  publish(input: NodeImageVersionInput): NodeImageVersion {
    if (!VERSION_NAME.test(input.version)) {
      throw new Error(`version must be Major.Minor.Patch (e.g. 202612.06.0), got '${input.version}'`);
    }
    if (input.publishedDate !== undefined && Number.isNaN(input.publishedDate.getTime())) {
      throw new Error('publishedDate is not a valid date');
    }
    if (input.behavior !== undefined) checkBehavior(input.behavior);
    const existing = this.#versions.get(input.version.toLowerCase());
    const publishedDate =
      input.publishedDate?.toISOString() ?? existing?.publishedDate ?? this.#nextDate().toISOString();
    const published: NodeImageVersion = {
      version: existing?.version ?? input.version,
      publishedDate,
      behavior: input.behavior ?? existing?.behavior ?? 'healthy',
      excludeFromLatest: false,
      withdrawn: false,
    };
    this.#versions.set(published.version.toLowerCase(), published);
    return { ...published };
  }

  /** Withdraws a version (or, with `excludeFromLatest`, keeps it listed but never the latest). */
  unpublish(version: string, options: UnpublishOptions = {}): NodeImageVersion {
    const known = this.#known(version);
    if (options.excludeFromLatest) {
      known.excludeFromLatest = true;
      known.withdrawn = false;
    } else {
      known.withdrawn = true;
    }
    return { ...known };
  }

  setBehavior(version: string, behavior: NodeImageBehavior): NodeImageVersion {
    checkBehavior(behavior);
    const known = this.#known(version);
    known.behavior = behavior;
    return { ...known };
  }

  /** Every version known, withdrawn ones included, oldest first. */
  versions(): NodeImageVersion[] {
    return this.#sorted().map((v) => ({ ...v }));
  }

  /**
   * How a VM booted from `communityGalleryImageId` behaves: healthy for any other image, and for a
   * version the emulator never published.
   */
  behaviorOf(communityGalleryImageId: string | undefined): NodeImageBehavior {
    const image = parseCommunityGalleryImageId(communityGalleryImageId);
    if (!image || !this.#isDefinition(image.gallery, image.definition, DEFINITIONS)) return 'healthy';
    return this.#versions.get(image.version.toLowerCase())?.behavior ?? 'healthy';
  }

  /** The versions of one definition as ARM lists them (CommunityGalleryImageVersion resources), oldest first. */
  list(location: string, gallery: string, definition: string): Record<string, unknown>[] {
    if (!this.#isDefinition(gallery, definition, [...DEFINITIONS, ...RETIRED_DEFINITIONS])) {
      throw new ArmError(
        404,
        'GalleryImageNotFound',
        `The gallery image '${definition}' of community gallery '${gallery}' is not found in location '${location}'.`,
      );
    }
    const [canonicalGallery, canonicalDefinition] =
      DEFINITIONS.find(([g, d]) => same(g, gallery) && same(d, definition)) ?? [];
    if (canonicalGallery === undefined || canonicalDefinition === undefined) return [];
    return this.#sorted()
      .filter((v) => !v.withdrawn)
      .map((v) => ({
        name: v.version,
        location: location.toLowerCase(),
        type: 'Microsoft.Compute/locations/communityGalleries/images/versions',
        identifier: {
          uniqueId: `/CommunityGalleries/${canonicalGallery}/Images/${canonicalDefinition}/Versions/${v.version}`,
        },
        properties: {
          publishedDate: v.publishedDate,
          excludeFromLatest: v.excludeFromLatest,
          storageProfile: { osDiskImage: { diskSizeGB: 30, hostCaching: 'ReadOnly' } },
        },
      }));
  }

  /** Refuses a communityGalleryImageId that names no published version (other image kinds pass). */
  check(imageReference: unknown): void {
    if (!isObject(imageReference)) return;
    const id = imageReference.communityGalleryImageId;
    if (id === undefined) return;
    const image = typeof id === 'string' ? parseCommunityGalleryImageId(id) : undefined;
    const published =
      image !== undefined &&
      this.#isDefinition(image.gallery, image.definition, DEFINITIONS) &&
      this.#versions.get(image.version.toLowerCase())?.withdrawn === false;
    if (!published) {
      throw new ArmError(
        404,
        'GalleryImageNotFound',
        `The community gallery image version '${String(id)}' is not found.`,
        'imageReference.communityGalleryImageId',
      );
    }
  }

  #known(version: string): NodeImageVersion {
    const known = this.#versions.get(version.toLowerCase());
    if (!known) throw new Error(`node image version '${version}' was never published`);
    return known;
  }

  #isDefinition(gallery: string, definition: string, definitions: readonly [string, string][]): boolean {
    return definitions.some(([g, d]) => same(g, gallery) && same(d, definition));
  }

  #sorted(): NodeImageVersion[] {
    return [...this.#versions.values()].sort(
      (a, b) => Date.parse(a.publishedDate) - Date.parse(b.publishedDate),
    );
  }

  #nextDate(): Date {
    const newest = Math.max(0, ...[...this.#versions.values()].map((v) => Date.parse(v.publishedDate)));
    return new Date(Math.max(Date.now(), newest + 1_000));
  }
}

function checkBehavior(behavior: string): void {
  if (!(nodeImageBehaviors as readonly string[]).includes(behavior)) {
    throw new Error(`behavior must be one of ${nodeImageBehaviors.join(', ')}, got '${behavior}'`);
  }
}
